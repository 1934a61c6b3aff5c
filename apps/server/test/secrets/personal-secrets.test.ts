import { beforeAll, describe, expect, it } from "vitest";
import { createIdentity, createProject, expectOk, type TestIdentity } from "../helpers/tenant";
import { configureSso, signedInPerson } from "../sso/sso-helpers";
import { createSecretsScope, putSecret, rawHttp, type RawHttp, type SecretsScope } from "./helpers";

type Row = { secretKey: string; secretValue: string; type: string; secretValueHidden?: boolean };
const rowsOf = (body: { secrets: Row[] }) => body.secrets.map((s) => [s.secretKey, s.type, s.secretValue]);

describe("personal secrets of people", () => {
  let scope: SecretsScope;
  let alice: Awaited<ReturnType<typeof signedInPerson>> & { http: RawHttp };
  let bob: Awaited<ReturnType<typeof signedInPerson>> & { http: RawHttp };
  let machine: TestIdentity & { http: RawHttp };
  const where = () => ({ workspaceId: scope.projectId, environment: "dev" });
  const list = (http: RawHttp, query: Record<string, string> = {}) =>
    http.get("/api/v3/secrets/raw", { ...where(), ...query });

  beforeAll(async () => {
    scope = await createSecretsScope();
    await configureSso(scope.tenant);
    const join = async () => {
      const person = await signedInPerson(scope.tenant);
      expectOk(
        await scope.tenant.admin.users.inviteProjectMembers({
          params: { projectId: scope.projectId },
          body: { emails: [person.email] },
        }),
      );
      return { ...person, http: rawHttp(scope.tenant.app.baseUrl, person.token) };
    };
    alice = await join();
    bob = await join();
    const identity = await createIdentity(scope.tenant, { projectId: scope.projectId, projectRole: "admin" });
    machine = { ...identity, http: rawHttp(scope.tenant.app.baseUrl, identity.token) };
  });

  it("on v3, as the CLI's `secrets set --type=personal`: created, read in place of the shared one, updated, deleted", async () => {
    await putSecret(scope.http, scope.projectId, "DB_URL", "shared-url");
    await putSecret(scope.http, scope.projectId, "LINK", "${DB_URL}!");
    const created = await alice.http.post("/api/v3/secrets/raw/DB_URL", {
      ...where(),
      secretValue: "alice-url",
      type: "personal",
    });
    expect(created.status).toBe(200);
    expect(created.body.secret).toMatchObject({
      secretKey: "DB_URL",
      type: "personal",
      secretValue: "alice-url",
      version: 1,
    });
    const personalId = created.body.secret.id as string;

    // Lists: one entry per key, the owner's personal one in place of the shared one.
    expect(rowsOf((await list(alice.http)).body)).toEqual([
      ["DB_URL", "personal", "alice-url"],
      ["LINK", "shared", "${DB_URL}!"],
    ]);
    const expanded = await list(alice.http, { expandSecretReferences: "true" });
    expect(rowsOf(expanded.body)[1]).toEqual(["LINK", "shared", "alice-url!"]);
    const shared = await list(alice.http, { includePersonalOverrides: "false" });
    expect(rowsOf(shared.body)[0]).toEqual(["DB_URL", "shared", "shared-url"]);
    // The owner always sees their own value.
    const masked = await list(alice.http, { viewSecretValue: "false" });
    expect(masked.body.secrets[0]).toMatchObject({
      type: "personal",
      secretValue: "alice-url",
      secretValueHidden: false,
    });
    expect(masked.body.secrets[1]).toMatchObject({ secretValueHidden: true });

    // Single reads: merged by default, `type=personal` reads only the personal one.
    const get = (http: RawHttp, query: Record<string, string> = {}) =>
      http.get("/api/v3/secrets/raw/DB_URL", { ...where(), ...query });
    expect((await get(alice.http)).body.secret).toMatchObject({ type: "personal", secretValue: "alice-url" });
    expect((await get(alice.http, { type: "personal" })).body.secret).toMatchObject({ id: personalId });
    expect((await get(alice.http, { includePersonalOverrides: "false" })).body.secret).toMatchObject({
      type: "shared",
      secretValue: "shared-url",
    });
    expect((await alice.http.get(`/api/v3/secrets/raw/id/${personalId}`)).body.secret).toMatchObject({
      type: "personal",
      secretValue: "alice-url",
    });

    // Nobody else sees it: another person, an identity; lists, reads, references, by id, versions, search.
    for (const other of [bob.http, machine.http, scope.http]) {
      expect(rowsOf((await list(other, { expandSecretReferences: "true" })).body)).toEqual([
        ["DB_URL", "shared", "shared-url"],
        ["LINK", "shared", "shared-url!"],
      ]);
      expect((await get(other)).body.secret).toMatchObject({ type: "shared", secretValue: "shared-url" });
      const personal = await get(other, { type: "personal" });
      expect(personal.status).toBe(404);
      const byId = await other.get(`/api/v3/secrets/raw/id/${personalId}`);
      expect(byId.status).toBe(403);
      expect(byId.body.message).toBe("You are not allowed to access this secret");
      expect((await other.get(`/api/v1/secret/${personalId}/secret-versions`)).status).toBe(404);
    }
    const found = expectOk(
      await scope.tenant.admin.secretSearch.search({ params: { projectId: scope.projectId }, query: {} }),
    );
    expect(JSON.stringify(found)).not.toContain("alice-url");
    expect(JSON.stringify(found)).not.toContain(personalId);

    // Nobody else touches it.
    const bobPatch = await bob.http.patch("/api/v3/secrets/raw/DB_URL", {
      ...where(),
      secretValue: "x",
      type: "personal",
    });
    expect(bobPatch.status).toBe(404);
    expect(bobPatch.body.message).toBe("Personal secret with name DB_URL not found");
    const bobDelete = await bob.http.delete("/api/v3/secrets/raw/DB_URL", { ...where(), type: "personal" });
    expect(bobDelete.status).toBe(404);
    expect(bobDelete.body.message).toBe("Secret not found");

    const updated = await alice.http.patch("/api/v3/secrets/raw/DB_URL", {
      ...where(),
      secretValue: "alice-url-2",
      type: "personal",
    });
    expect(updated.status).toBe(200);
    expect(updated.body.secret).toMatchObject({
      id: personalId,
      type: "personal",
      version: 2,
      secretValue: "alice-url-2",
    });
    const renamed = await alice.http.patch("/api/v3/secrets/raw/DB_URL", {
      ...where(),
      newSecretName: "OTHER",
      type: "personal",
    });
    expect(renamed.status).toBe(400);
    expect(renamed.body.message).toBe("Personal secret cannot change the key name");
    expect((await get(bob.http)).body.secret).toMatchObject({ type: "shared", secretValue: "shared-url", version: 1 });

    const deleted = await alice.http.delete("/api/v3/secrets/raw/DB_URL", { ...where(), type: "personal" });
    expect(deleted.status).toBe(200);
    expect(deleted.body.secret).toMatchObject({ id: personalId, type: "personal", secretValue: "alice-url-2" });
    expect(rowsOf((await list(alice.http)).body)[0]).toEqual(["DB_URL", "shared", "shared-url"]);

    // Every write left its event, naming the person.
    const { auditLogs } = expectOk(
      await scope.tenant.admin.auditLogs.list({ query: { actor: alice.user.id, projectId: scope.projectId } }),
    );
    const events = auditLogs.filter((e) => e.event.metadata?.secretId === personalId).map((e) => e.event.type);
    expect(events.sort()).toEqual(["create-secret", "delete-secret", "update-secret"]);
  });

  it("on v4: needs the shared secret, is unique per person, and goes with the shared secret's deletion", async () => {
    const body = { projectId: scope.projectId, environment: "dev", secretPath: "/" };
    const lonely = await alice.client.secretsV4.create({
      params: { secretName: "NO_SHARED" },
      body: { ...body, secretValue: "v", type: "personal" },
    });
    expect(lonely.status).toBe(400);
    expect(lonely.body).toMatchObject({
      message: "Failed to create personal secret override for no corresponding shared secret",
    });

    await putSecret(scope.http, scope.projectId, "TOKEN", "shared-token");
    for (const [person, value] of [
      [alice, "alice-token"],
      [bob, "bob-token"],
    ] as const) {
      const made = await person.client.secretsV4.create({
        params: { secretName: "TOKEN" },
        body: { ...body, secretValue: value, type: "personal" },
      });
      expect(made.status).toBe(200);
    }
    const twice = await alice.client.secretsV4.create({
      params: { secretName: "TOKEN" },
      body: { ...body, secretValue: "again", type: "personal" },
    });
    expect(twice.status).toBe(400);
    expect(twice.body).toMatchObject({ message: "Secret already exist" });

    const v4list = async (client: typeof alice.client, includePersonalOverrides?: "true" | "false") =>
      expectOk(
        await client.secretsV4.list({
          query: { projectId: scope.projectId, environment: "dev", includePersonalOverrides },
        }),
      ).secrets.find((s) => s.secretKey === "TOKEN");
    expect(await v4list(alice.client)).toMatchObject({ type: "personal", secretValue: "alice-token" });
    expect(await v4list(alice.client, "true")).toMatchObject({ type: "personal", secretValue: "alice-token" });
    expect(await v4list(bob.client)).toMatchObject({ type: "personal", secretValue: "bob-token" });
    expect(await v4list(alice.client, "false")).toMatchObject({ type: "shared", secretValue: "shared-token" });
    expect(await v4list(machine.client, "true")).toMatchObject({ type: "shared", secretValue: "shared-token" });
    const got = expectOk(
      await bob.client.secretsV4.get({
        params: { secretName: "TOKEN" },
        query: { projectId: scope.projectId, environment: "dev", type: "personal" },
      }),
    );
    expect(got.secret).toMatchObject({ type: "personal", secretValue: "bob-token" });

    // Deleting the shared secret (type shared) deletes the overrides of its key with it.
    const gone = await scope.tenant.admin.secretsV4.delete({ params: { secretName: "TOKEN" }, body });
    expect(gone.status).toBe(200);
    await putSecret(scope.http, scope.projectId, "TOKEN", "new-shared");
    expect(await v4list(alice.client)).toMatchObject({ type: "shared", secretValue: "new-shared" });
    expect(await v4list(bob.client)).toMatchObject({ type: "shared", secretValue: "new-shared" });
  });

  it("refuses machine identities with the reference's 400, people without the right with 403, and other organizations with 404", async () => {
    await putSecret(scope.http, scope.projectId, "GUARDED", "g");
    const write = { ...where(), secretValue: "m", type: "personal" };
    const create = await machine.http.post("/api/v3/secrets/raw/GUARDED", write);
    expect(create.status).toBe(400);
    expect(create.body.message).toBe("Must be user to create personal secret");
    const update = await machine.http.patch("/api/v4/secrets/GUARDED", {
      ...write,
      workspaceId: undefined,
      projectId: scope.projectId,
    });
    expect(update.status).toBe(400);
    expect(update.body.message).toBe("Must be user to create personal secret");
    const remove = await machine.http.delete("/api/v3/secrets/raw/GUARDED", { ...where(), type: "personal" });
    expect(remove.status).toBe(400);
    expect(remove.body.message).toBe("Must be user to delete personal secret");

    // A viewer may read but not write: a personal secret needs the same right as the shared write.
    const viewer = await signedInPerson(scope.tenant);
    expectOk(
      await scope.tenant.admin.users.inviteProjectMembers({
        params: { projectId: scope.projectId },
        body: { emails: [viewer.email], roleSlugs: ["viewer"] },
      }),
    );
    const denied = await rawHttp(scope.tenant.app.baseUrl, viewer.token).post("/api/v3/secrets/raw/GUARDED", write);
    expect(denied.status).toBe(403);

    const elsewhere = await createProject((await createSecretsScope()).tenant);
    const foreign = await alice.http.post("/api/v3/secrets/raw/GUARDED", { ...write, workspaceId: elsewhere.id });
    expect(foreign.status).toBe(404);
    const foreignV4 = await alice.client.secretsV4.create({
      params: { secretName: "GUARDED" },
      body: { projectId: elsewhere.id, environment: "dev", secretPath: "/", secretValue: "m", type: "personal" },
    });
    expect(foreignV4.status).toBe(404);
  });
});
