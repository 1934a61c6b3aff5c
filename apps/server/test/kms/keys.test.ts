import { describe, expect, it } from "vitest";
import { createIdentity, createProject, createTenant } from "../helpers/tenant";
import { rawHttp } from "../secrets/helpers";
import { b64, createKey, createKmsScope } from "./helpers";

const messages = (body: { message: unknown }) => JSON.stringify(body.message);

describe("KMS keys", () => {
  it("creates an AES-256-GCM encrypt-decrypt key by default, at version 1", async () => {
    const scope = await createKmsScope();
    const res = await scope.tenant.admin.kms.create({ body: { projectId: scope.projectId, name: "Default-Key" } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      key: {
        name: "default-key",
        description: "",
        keyUsage: "encrypt-decrypt",
        encryptionAlgorithm: "aes-256-gcm",
        version: 1,
        isDisabled: false,
        projectId: scope.projectId,
        orgId: scope.tenant.orgId,
      },
    });
  });

  it("accepts the lower-case asymmetric aliases and answers with the canonical name", async () => {
    const scope = await createKmsScope();
    const key = await createKey(scope, { keyUsage: "sign-verify", encryptionAlgorithm: "ecc-nist-p256" });
    expect(key.encryptionAlgorithm).toBe("ECC_NIST_P256");
  });

  it("rejects an algorithm that does not fit the key usage with the reference's messages", async () => {
    const { http, projectId } = await createKmsScope();
    const symmetric = await http.post("/api/v1/kms/keys", {
      projectId,
      name: "a",
      keyUsage: "encrypt-decrypt",
      encryptionAlgorithm: "RSA_4096",
    });
    expect(symmetric.status).toBe(422);
    expect(messages(symmetric.body)).toContain(
      "encryptionAlgorithm must be a valid symmetric encryption algorithm. Valid options are: aes-256-gcm, aes-128-gcm",
    );
    // The algorithm defaults to aes-256-gcm, so a sign-verify key needs one.
    const asymmetric = await http.post("/api/v1/kms/keys", { projectId, name: "b", keyUsage: "sign-verify" });
    expect(asymmetric.status).toBe(422);
    expect(messages(asymmetric.body)).toContain(
      "encryptionAlgorithm must be a valid asymmetric sign-verify algorithm. Valid options are: RSA_4096, ECC_NIST_P256",
    );
    const unknown = await http.post("/api/v1/kms/keys", { projectId, name: "c", encryptionAlgorithm: "des" });
    expect(unknown.status).toBe(422);
  });

  it("bounds names and descriptions", async () => {
    const { http, projectId } = await createKmsScope();
    for (const body of [
      { name: "" },
      { name: "x".repeat(33) },
      { name: "not a slug" },
      { name: "ok", description: "d".repeat(501) },
    ]) {
      expect((await http.post("/api/v1/kms/keys", { projectId, ...body })).status).toBe(422);
    }
  });

  it("refuses a second key of the same name in the project, on create and on rename", async () => {
    const scope = await createKmsScope();
    await createKey(scope, { name: "taken" });
    const other = await createKey(scope, { name: "other" });
    const message = `A KMS key with the name "taken" already exists for the project with ID "${scope.projectId}"`;
    const dup = await scope.http.post("/api/v1/kms/keys", { projectId: scope.projectId, name: "taken" });
    expect(dup).toMatchObject({ status: 400, body: { message } });
    const rename = await scope.http.patch(`/api/v1/kms/keys/${other.id}`, { name: "taken" });
    expect(rename).toMatchObject({ status: 400, body: { message } });
  });

  it("gets a key by id and by name, with the reference's not-found messages", async () => {
    const scope = await createKmsScope();
    const key = await createKey(scope, { name: "found" });
    expect((await scope.http.get(`/api/v1/kms/keys/${key.id}`)).body.key.name).toBe("found");
    const byName = await scope.http.get("/api/v1/kms/keys/key-name/found", { projectId: scope.projectId });
    expect(byName.body.key.id).toBe(key.id);
    const missingName = await scope.http.get("/api/v1/kms/keys/key-name/nope", { projectId: scope.projectId });
    expect(missingName).toMatchObject({
      status: 404,
      body: { message: `Key with name "nope" not found for project with ID "${scope.projectId}"` },
    });
    const noProject = await scope.http.get("/api/v1/kms/keys/key-name/found");
    expect(noProject.status).toBe(422);
    expect(messages(noProject.body)).toContain("Project ID is required");
    const id = "5f0f2a57-6d7e-4c6b-9a36-0d6f3a1b2c3d";
    expect(await scope.http.get(`/api/v1/kms/keys/${id}`)).toMatchObject({
      status: 404,
      body: { message: `Key with ID "${id}" not found` },
    });
    expect(await scope.http.patch(`/api/v1/kms/keys/${id}`, { description: "x" })).toMatchObject({
      status: 404,
      body: { message: `Key with ID ${id} not found` },
    });
    expect((await scope.http.get("/api/v1/kms/keys/not-a-uuid")).status).toBe(422);
  });

  it("lists a page of keys with search, order and the total", async () => {
    const scope = await createKmsScope();
    for (const name of ["alpha", "beta", "gamma", "alpine"]) await createKey(scope, { name });
    const page = await scope.http.get("/api/v1/kms/keys", {
      projectId: scope.projectId,
      limit: "2",
      offset: "1",
      orderDirection: "desc",
    });
    expect(page.body.totalCount).toBe(4);
    const names = (page.body.keys as { name: string }[]).map((k) => k.name);
    expect(names).toEqual(["beta", "alpine"]);
    const search = await scope.http.get("/api/v1/kms/keys", { projectId: scope.projectId, search: "alp" });
    expect(search.body).toMatchObject({ totalCount: 2 });
    expect((await scope.http.get("/api/v1/kms/keys", { projectId: scope.projectId, limit: "101" })).status).toBe(422);
  });

  it("renames, describes, disables and re-enables a key; a disabled key refuses every operation", async () => {
    const scope = await createKmsScope();
    const key = await createKey(scope);
    const updated = await scope.http.patch(`/api/v1/kms/keys/${key.id}`, {
      name: "renamed",
      description: "  why  ",
      isDisabled: true,
    });
    expect(updated.body.key).toMatchObject({ name: "renamed", description: "why", isDisabled: true });
    const refused = await scope.http.post(`/api/v1/kms/keys/${key.id}/encrypt`, { plaintext: b64("x") });
    expect(refused).toMatchObject({ status: 400, body: { message: "Key is disabled" } });
    await scope.http.patch(`/api/v1/kms/keys/${key.id}`, { isDisabled: false });
    expect((await scope.http.post(`/api/v1/kms/keys/${key.id}/encrypt`, { plaintext: b64("x") })).status).toBe(200);
  });

  it("deletes a key and answers with it; it is gone afterwards", async () => {
    const scope = await createKmsScope();
    const key = await createKey(scope);
    const deleted = await scope.http.delete(`/api/v1/kms/keys/${key.id}`);
    expect(deleted.body.key.id).toBe(key.id);
    expect((await scope.http.get(`/api/v1/kms/keys/${key.id}`)).status).toBe(404);
    expect(await scope.http.delete(`/api/v1/kms/keys/${key.id}`)).toMatchObject({
      status: 404,
      body: { message: `Key with ID ${key.id} not found` },
    });
  });

  it("hides another tenant's key behind 404 on every route", async () => {
    const scope = await createKmsScope();
    const key = await createKey(scope);
    const stranger = await createTenant();
    const http = rawHttp(stranger.app.baseUrl, stranger.adminToken);
    const base = `/api/v1/kms/keys/${key.id}`;
    for (const res of [
      await http.get(base),
      await http.patch(base, { isDisabled: true }),
      await http.delete(base),
      await http.post(`${base}/rotate`, {}),
      await http.post(`${base}/encrypt`, { plaintext: b64("x") }),
      await http.get(`${base}/private-key`),
    ])
      expect(res.status).toBe(404);
    expect((await http.get("/api/v1/kms/keys", { projectId: scope.projectId })).status).toBe(404);
  });

  it("keeps keys to kms projects", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const res = await rawHttp(tenant.app.baseUrl, tenant.adminToken).post("/api/v1/kms/keys", {
      projectId: project.id,
      name: "k",
    });
    expect(res).toMatchObject({
      status: 400,
      body: { message: "The project is of type secret-manager. Operations of type kms are not allowed." },
    });
  });

  it("checks cmek permissions: viewers read, members use keys, only admins export or manage", async () => {
    const scope = await createKmsScope();
    const key = await createKey(scope);
    const viewer = await createIdentity(scope.tenant, { projectId: scope.projectId, projectRole: "viewer" });
    const member = await createIdentity(scope.tenant, { projectId: scope.projectId, projectRole: "member" });
    const asViewer = rawHttp(scope.tenant.app.baseUrl, viewer.token);
    const asMember = rawHttp(scope.tenant.app.baseUrl, member.token);
    expect((await asViewer.get(`/api/v1/kms/keys/${key.id}`)).status).toBe(200);
    expect(await asViewer.post("/api/v1/kms/keys", { projectId: scope.projectId, name: "v" })).toMatchObject({
      status: 403,
      body: { error: "PermissionDenied", message: "You are not allowed to create on cmek" },
    });
    expect(await asViewer.post(`/api/v1/kms/keys/${key.id}/encrypt`, { plaintext: b64("x") })).toMatchObject({
      status: 403,
      body: { message: "You are not allowed to encrypt on cmek" },
    });
    expect((await asViewer.patch(`/api/v1/kms/keys/${key.id}`, { description: "x" })).status).toBe(403);
    expect((await asViewer.delete(`/api/v1/kms/keys/${key.id}`)).status).toBe(403);
    expect((await asViewer.post(`/api/v1/kms/keys/${key.id}/rotate`, {})).status).toBe(403);
    const ciphertext = (await asMember.post(`/api/v1/kms/keys/${key.id}/encrypt`, { plaintext: b64("x") })).body
      .ciphertext as string;
    expect((await asMember.post(`/api/v1/kms/keys/${key.id}/decrypt`, { ciphertext })).status).toBe(200);
    expect(await asViewer.post(`/api/v1/kms/keys/${key.id}/decrypt`, { ciphertext })).toMatchObject({
      status: 403,
      body: { message: "You are not allowed to decrypt on cmek" },
    });
    expect(await asMember.get(`/api/v1/kms/keys/${key.id}/private-key`)).toMatchObject({
      status: 403,
      body: { message: "You are not allowed to export-private-key on cmek" },
    });
    expect((await scope.http.get(`/api/v1/kms/keys/${key.id}/private-key`)).status).toBe(200);
  });
});
