import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { expectOk } from "../helpers/tenant";
import { findProjectKey } from "../../src/modules/project-keys/project-key.service";
import { secretAad } from "../../src/modules/secrets/secret-crypto";
import { createFolder, createSecretsScope, putSecret } from "./helpers";

const RAW = "/api/v3/secrets/raw";

describe("secrets integrity", () => {
  it("50 parallel updates of one secret serialise and end at version 51", async () => {
    const { http, projectId } = await createSecretsScope();
    const created = await putSecret(http, projectId, "HOT", "0");
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        http.patch(`${RAW}/HOT`, { workspaceId: projectId, environment: "dev", secretValue: `v${i + 1}` }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(50).fill(200));
    expect(new Set(results.map((r) => r.body.secret.version as number)).size).toBe(50);
    const final = await http.get(`${RAW}/HOT`, { workspaceId: projectId, environment: "dev" });
    expect(final.body.secret.version).toBe(51);
    const versions = await http.get(`/api/v1/secret/${created.id}/secret-versions`, { limit: "100" });
    expect((versions.body.secretVersions as { version: number }[]).map((v) => v.version)).toEqual(
      Array.from({ length: 51 }, (_, i) => 51 - i),
    );
  });

  it("a batch with one bad item writes nothing", async () => {
    const { http, projectId } = await createSecretsScope();
    await putSecret(http, projectId, "EXISTS", "x");
    const base = { workspaceId: projectId, environment: "dev" };
    const create = await http.post("/api/v3/secrets/batch/raw", {
      ...base,
      secrets: [
        { secretKey: "NEW1", secretValue: "1" },
        { secretKey: "NEW2", secretValue: "${MISSING}" },
      ],
    });
    expect(create).toMatchObject({ status: 400, body: { message: "Referenced secret(s) not found: MISSING" } });
    const update = await http.patch("/api/v3/secrets/batch/raw", {
      ...base,
      secrets: [
        { secretKey: "EXISTS", secretValue: "changed" },
        { secretKey: "ABSENT", secretValue: "y" },
      ],
    });
    expect(update).toMatchObject({ status: 404, body: { message: "Secret does not exist: ABSENT in path /" } });
    const list = await http.get(RAW, base);
    expect(list.body.secrets).toHaveLength(1);
    expect(list.body.secrets[0]).toMatchObject({ secretKey: "EXISTS", secretValue: "x", version: 1 });
  });

  it("batches create, upsert and delete all at once", async () => {
    const { http, projectId } = await createSecretsScope();
    const base = { projectId, environment: "dev" };
    const created = await http.post("/api/v4/secrets/batch", {
      ...base,
      secrets: [
        { secretKey: "B1", secretValue: "1" },
        { secretKey: "B2", secretValue: "${B1}" },
      ],
    });
    expect(created.status).toBe(200);
    const upsert = await http.patch("/api/v4/secrets/batch", {
      ...base,
      mode: "upsert",
      secrets: [
        { secretKey: "B1", secretValue: "one" },
        { secretKey: "B3", secretValue: "three" },
      ],
    });
    expect(upsert.status).toBe(200);
    expect(
      (upsert.body.secrets as { secretKey: string; version: number }[]).map((s) => [s.secretKey, s.version]),
    ).toEqual([
      ["B1", 2],
      ["B3", 1],
    ]);
    const removed = await http.delete("/api/v4/secrets/batch", {
      ...base,
      secrets: [{ secretKey: "B1" }, { secretKey: "B9" }],
    });
    expect(removed).toMatchObject({ status: 404, body: { message: "One or more secrets does not exist: B9" } });
    const gone = await http.delete("/api/v4/secrets/batch", {
      ...base,
      secrets: [{ secretKey: "B1" }, { secretKey: "B2" }],
    });
    expect(gone.status).toBe(200);
    expect((await http.get("/api/v4/secrets", base)).body.secrets).toHaveLength(1);
    const tooMany = await http.post("/api/v4/secrets/batch", {
      ...base,
      secrets: Array.from({ length: 1001 }, (_, i) => ({ secretKey: `K${i}`, secretValue: "v" })),
    });
    expect(tooMany.status).toBe(422);
  });

  it("stores no plaintext: the raw table holds ciphertexts bound to their rows", async () => {
    const { http, projectId, tenant } = await createSecretsScope();
    const marker = `plaintext-marker-${Date.now()}`;
    const secret = await putSecret(http, projectId, "HIDDEN", marker, {
      secretComment: `comment-${marker}`,
      secretMetadata: [{ key: "k", value: `meta-${marker}`, isEncrypted: true }],
    });
    await http.patch(`${RAW}/HIDDEN`, { workspaceId: projectId, environment: "dev", secretValue: `${marker}-2` });
    const db = tenant.app.deps.db;
    const dump = await sql<{ row: string }>`
      select row_to_json(s)::text as row from secrets s
      union all select row_to_json(v)::text from secret_versions v`.execute(db);
    const keys = await sql<{ row: string }>`select row_to_json(k)::text as row from project_data_keys k`.execute(db);
    const text = [...dump.rows, ...keys.rows].map((r) => r.row).join("\n");
    expect(text).toContain("HIDDEN");
    expect(text).not.toContain(marker);
    // Value and comment in one ciphertext per row, secrets and versions alike.
    const forms = await sql<{ fields: boolean; value: boolean; comment: boolean }>`
      select encrypted_fields is not null as fields, encrypted_value is not null as value,
        encrypted_comment is not null as comment from secrets where id = ${secret.id}
      union all select encrypted_fields is not null, encrypted_value is not null, encrypted_comment is not null
        from secret_versions where secret_id = ${secret.id}`.execute(db);
    expect(forms.rows).toHaveLength(3);
    expect(forms.rows.every((r) => r.fields && !r.value && !r.comment)).toBe(true);
    // A ciphertext copied onto another row does not decrypt there.
    const other = await putSecret(http, projectId, "OTHER", "other");
    await db
      .updateTable("secrets")
      .set({ encrypted_fields: sql`(select encrypted_fields from secrets where id = ${secret.id})` })
      .where("id", "=", other.id)
      .execute();
    const read = await http.get(`${RAW}/OTHER`, { workspaceId: projectId, environment: "dev" });
    expect(read.status).toBe(500);
    expect(JSON.stringify(read.body)).not.toContain(marker);
    // A row holds exactly one form.
    for (const change of [{ encrypted_value: sql<string>`encrypted_fields` }, { encrypted_fields: null }])
      await expect(db.updateTable("secrets").set(change).where("id", "=", secret.id).execute()).rejects.toThrow(
        /secrets_one_sealed_form/,
      );
  });

  it("reads rows sealed in the older two-ciphertext form and rewrites them in the new form", async () => {
    const { http, projectId, tenant } = await createSecretsScope();
    const secret = await putSecret(http, projectId, "OLD", "old-value", { secretComment: "old comment" });
    const { deps } = tenant.app;
    const key = (await findProjectKey(deps, projectId))!;
    // As rows were written before migration 0022: one ciphertext for the value, one for the comment.
    const toOlderForm = async (table: "secrets" | "secret_versions", id: string) => {
      await deps.db
        .updateTable(table)
        .set({
          encrypted_fields: null,
          encrypted_value: key.seal("old-value", secretAad(table, id, "value")),
          encrypted_comment: key.seal("old comment", secretAad(table, id, "comment")),
        })
        .where("id", "=", id)
        .execute();
    };
    await toOlderForm("secrets", secret.id);
    const version = await deps.db
      .selectFrom("secret_versions")
      .select("id")
      .where("secret_id", "=", secret.id)
      .executeTakeFirstOrThrow();
    await toOlderForm("secret_versions", version.id);
    const q = { workspaceId: projectId, environment: "dev" };
    const got = await http.get(`${RAW}/OLD`, q);
    expect(got.body.secret).toMatchObject({ secretValue: "old-value", secretComment: "old comment", version: 1 });
    const listed = await http.get("/api/v4/secrets", { projectId, environment: "dev" });
    expect(listed.body.secrets).toEqual([
      expect.objectContaining({ secretKey: "OLD", secretValue: "old-value", secretComment: "old comment" }),
    ]);
    const v1 = await http.get(`${RAW}/OLD`, { ...q, version: "1" });
    expect(v1.body.secret).toMatchObject({ secretValue: "old-value", secretComment: "old comment" });
    // A reference to it expands from the older form too.
    await putSecret(http, projectId, "REF", "${OLD}-ref");
    const expanded = await http.get(`${RAW}/REF`, { ...q, expandSecretReferences: "true" });
    expect(expanded.body.secret.secretValue).toBe("old-value-ref");

    // The next write re-seals the row (and records its version) in the new form, the comment kept.
    expect((await http.patch(`${RAW}/OLD`, { ...q, secretValue: "new-value" })).status).toBe(200);
    const row = await deps.db
      .selectFrom("secrets")
      .select(["encrypted_fields", "encrypted_value", "encrypted_comment"])
      .where("id", "=", secret.id)
      .executeTakeFirstOrThrow();
    expect(row.encrypted_fields).toMatch(/^d1:/);
    expect([row.encrypted_value, row.encrypted_comment]).toEqual([null, null]);
    const after = await http.get(`${RAW}/OLD`, q);
    expect(after.body.secret).toMatchObject({ secretValue: "new-value", secretComment: "old comment", version: 2 });
    const history = await tenant.admin.secretVersions.list({
      params: { secretId: secret.id },
      query: { offset: 0, limit: 20 },
    });
    expect(expectOk(history).secretVersions.map((v) => [v.version, v.secretValue, v.secretComment])).toEqual([
      [2, "new-value", "old comment"],
      [1, "old-value", "old comment"],
    ]);
  });

  it("refuses values over 1 MiB and names that are too long with 422", async () => {
    const { http, projectId } = await createSecretsScope();
    const big = await http.post(`${RAW}/BIG`, {
      workspaceId: projectId,
      environment: "dev",
      secretValue: "x".repeat(1024 * 1024 + 1),
    });
    expect(big.status).toBe(422);
    expect(JSON.stringify(big.body.message)).toContain("1 MiB");
    const fits = await http.post(`${RAW}/FITS`, {
      workspaceId: projectId,
      environment: "dev",
      secretValue: "x".repeat(1024 * 1024),
    });
    expect(fits.status).toBe(200);
    const long = await http.post(`${RAW}/${"N".repeat(257)}`, {
      workspaceId: projectId,
      environment: "dev",
      secretValue: "v",
    });
    expect(long.status).toBe(422);
    const odd = await http.post(`${RAW}/${encodeURIComponent("has space")}`, {
      workspaceId: projectId,
      environment: "dev",
      secretValue: "v",
    });
    expect(odd.status).toBe(422);
  });

  it("deleting a folder, an environment or a project removes its secrets", async () => {
    const { http, projectId, tenant } = await createSecretsScope();
    const folder = await createFolder(tenant, projectId, "dev", "/", "gone");
    await putSecret(http, projectId, "IN_FOLDER", "1", { secretPath: "/gone" });
    await putSecret(http, projectId, "IN_ENV", "1", { environment: "staging" });
    await putSecret(http, projectId, "IN_PROJECT", "1");
    const count = async () =>
      (
        await tenant.app.deps.db
          .selectFrom("secrets")
          .select((eb) => eb.fn.countAll<string>().as("n"))
          .where("key", "in", ["IN_FOLDER", "IN_ENV", "IN_PROJECT"])
          .executeTakeFirstOrThrow()
      ).n;
    expect(Number(await count())).toBe(3);
    expectOk(
      await tenant.admin.folders.delete({
        params: { folderIdOrName: folder.id },
        body: { workspaceId: projectId, environment: "dev", path: "/" },
      }),
    );
    expect(Number(await count())).toBe(2);
    const envs = expectOk(await tenant.admin.projects.listEnvironments({ params: { projectId } })).environments;
    const staging = envs.find((e) => e.slug === "staging")!;
    expectOk(await tenant.admin.projects.deleteEnvironment({ params: { projectId, environmentId: staging.id } }));
    expect(Number(await count())).toBe(1);
    expectOk(await tenant.admin.projects.delete({ params: { projectId } }));
    expect(Number(await count())).toBe(0);
  });

  it("another tenant's secrets are 404 and unnamed projects are 400", async () => {
    const mine = await createSecretsScope();
    const theirs = await createSecretsScope();
    const secret = await putSecret(mine.http, mine.projectId, "MINE", "m");
    expect((await theirs.http.get(`${RAW}/MINE`, { workspaceId: mine.projectId, environment: "dev" })).status).toBe(
      404,
    );
    expect((await theirs.http.get(`${RAW}/id/${secret.id}`)).status).toBe(404);
    expect((await theirs.http.get(`/api/v1/secret/${secret.id}/secret-versions`)).status).toBe(404);
    const unnamed = await mine.http.get(RAW, { environment: "dev" });
    expect(unnamed).toMatchObject({ status: 400, body: { message: "Missing project id or environment" } });
    const noEnv = await mine.http.get(`${RAW}/MINE`, { workspaceId: mine.projectId });
    expect(noEnv).toMatchObject({ status: 400, body: { message: "Missing environment" } });
    const v4 = await mine.http.get("/api/v4/secrets/MINE", { environment: "dev" });
    expect(v4.status).toBe(422);
    const byId = await mine.http.get(`/api/v4/secrets/id/${secret.id}`);
    expect(byId.body.secret).toMatchObject({ secretKey: "MINE", secretValue: "m", secretPath: "/" });
    expect(byId.body.secret.secretValueHidden).toBeUndefined();
  });
});
