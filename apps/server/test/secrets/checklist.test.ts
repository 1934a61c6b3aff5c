import { describe, expect, it } from "vitest";
import { addImport, createFolder, createSecretsScope, identityWithRules, putSecret } from "./helpers";

const RAW = "/api/v3/secrets/raw";

/** The reference's edge-case checklist (§12), item by item. */
describe("secrets edge cases", () => {
  it("1, 2: a missing path lists as empty but reads by name as 404", async () => {
    const { http, projectId } = await createSecretsScope();
    const list = await http.get(RAW, { workspaceId: projectId, environment: "dev", secretPath: "/nope" });
    expect(list).toMatchObject({ status: 200, body: { secrets: [], imports: [] } });
    const one = await http.get(`${RAW}/X`, { workspaceId: projectId, environment: "dev", secretPath: "/nope" });
    expect(one.status).toBe(404);
    expect(one.body.message).toBe("Folder with path '/nope' in environment with slug 'dev' not found");
  });

  it("3: boolean flags are the strings true/false only; missing ones take their defaults", async () => {
    const { http, projectId } = await createSecretsScope();
    await putSecret(http, projectId, "A", "1");
    const bad = await http.get(RAW, { workspaceId: projectId, environment: "dev", viewSecretValue: "1" });
    expect(bad.status).toBe(422);
    const ok = await http.get(RAW, { workspaceId: projectId, environment: "dev" });
    expect(ok.body.secrets[0]).toMatchObject({ secretValue: "1", secretValueHidden: false });
  });

  it("4: a trailing slash is ignored and the default path is /", async () => {
    const { http, projectId, tenant } = await createSecretsScope();
    await createFolder(tenant, projectId, "dev", "/", "app");
    await putSecret(http, projectId, "K", "v", { secretPath: "/app/" });
    const list = await http.get(RAW, { workspaceId: projectId, environment: "dev", secretPath: "/app/" });
    expect(list.body.secrets[0]).toMatchObject({ secretKey: "K", secretPath: "/app" });
    await putSecret(http, projectId, "ROOT", "v");
    const root = await http.get(`${RAW}/ROOT`, { workspaceId: projectId, environment: "dev" });
    expect(root.body.secret.secretPath).toBe("/");
  });

  it("5: values are trimmed, keeping one final newline", async () => {
    const { http, projectId } = await createSecretsScope();
    await putSecret(http, projectId, "NL", "  a b \n");
    await putSecret(http, projectId, "SP", "  x  ");
    const list = await http.get(RAW, { workspaceId: projectId, environment: "dev" });
    const values = Object.fromEntries(
      (list.body.secrets as { secretKey: string; secretValue: string }[]).map((s) => [s.secretKey, s.secretValue]),
    );
    expect(values).toEqual({ NL: "a b\n", SP: "x" });
  });

  it("6: a duplicate shared secret is 400", async () => {
    const { http, projectId } = await createSecretsScope();
    await putSecret(http, projectId, "DUP", "1");
    const again = await http.post(`${RAW}/DUP`, { workspaceId: projectId, environment: "dev", secretValue: "2" });
    expect(again).toMatchObject({ status: 400, body: { message: "Secret already exist" } });
  });

  it("7: machine identities cannot write personal secrets", async () => {
    const { http, projectId } = await createSecretsScope();
    await putSecret(http, projectId, "P", "1");
    const body = { workspaceId: projectId, environment: "dev", type: "personal" };
    const create = await http.post(`${RAW}/Q`, { ...body, secretValue: "x" });
    expect(create).toMatchObject({ status: 400, body: { message: "Must be user to create personal secret" } });
    const update = await http.patch(`${RAW}/P`, { ...body, secretValue: "x" });
    expect(update).toMatchObject({ status: 400, body: { message: "Must be user to create personal secret" } });
    const remove = await http.delete(`${RAW}/P`, body);
    expect(remove).toMatchObject({ status: 400, body: { message: "Must be user to delete personal secret" } });
    const read = await http.get(`${RAW}/P`, { workspaceId: projectId, environment: "dev", type: "personal" });
    expect(read.status).toBe(404);
  });

  it("8: unknown tag ids are 404", async () => {
    const { http, projectId } = await createSecretsScope();
    const res = await http.post(`${RAW}/T`, {
      workspaceId: projectId,
      environment: "dev",
      secretValue: "v",
      tagIds: ["6f1c1d2e-8a4b-4c3d-9e2f-1a2b3c4d5e6f"],
    });
    expect(res).toMatchObject({ status: 404, body: { message: "Tag not found. Found " } });
  });

  it("9: a reference to a missing key is refused on write and stays literal on read", async () => {
    const { http, projectId, tenant } = await createSecretsScope();
    const base = { workspaceId: projectId, environment: "dev" };
    const missing = await http.post(`${RAW}/R`, { ...base, secretValue: "${NOPE}" });
    expect(missing).toMatchObject({ status: 400, body: { message: "Referenced secret(s) not found: NOPE" } });
    const env = await http.post(`${RAW}/R`, { ...base, secretValue: "${qa.NOPE}" });
    expect(env).toMatchObject({ status: 400, body: { message: "Referenced environment not found. Missing qa" } });
    const path = await http.post(`${RAW}/R`, { ...base, secretValue: "${prod.x.NOPE}" });
    expect(path).toMatchObject({ status: 400, body: { message: "Referenced path /x doesn't exist" } });
    await createFolder(tenant, projectId, "prod", "/", "x");
    await putSecret(http, projectId, "TARGET", "t", { environment: "prod", secretPath: "/x" });
    await putSecret(http, projectId, "TMP", "tmp");
    await putSecret(http, projectId, "R", "${prod.x.TARGET}-${TMP}");
    await http.delete(`${RAW}/TMP`, base);
    const read = await http.get(`${RAW}/R`, { ...base, expandSecretReferences: "true" });
    expect(read.body.secret.secretValue).toBe("t-${TMP}");
  });

  it("10: self and mutual reference cycles expand once without error", async () => {
    const { http, projectId } = await createSecretsScope();
    const base = { workspaceId: projectId, environment: "dev" };
    await putSecret(http, projectId, "A", "a");
    await putSecret(http, projectId, "B", "b-${A}");
    expect((await http.patch(`${RAW}/A`, { ...base, secretValue: "a-${B}" })).status).toBe(200);
    await putSecret(http, projectId, "S", "s");
    expect((await http.patch(`${RAW}/S`, { ...base, secretValue: "s-${S}" })).status).toBe(200);
    const list = await http.get(RAW, { ...base, expandSecretReferences: "true" });
    const values = Object.fromEntries(
      (list.body.secrets as { secretKey: string; secretValue: string }[]).map((s) => [s.secretKey, s.secretValue]),
    );
    expect(values).toEqual({ A: "a-b-a-${B}", B: "b-a-b-${A}", S: "s-s-${S}" });
  });

  it("10: the reference depth stops at 10", async () => {
    const { http, projectId } = await createSecretsScope();
    await putSecret(http, projectId, "K0", "end");
    for (let i = 1; i <= 12; i += 1) await putSecret(http, projectId, `K${i}`, `\${K${i - 1}}`);
    const deep = await http.get(`${RAW}/K12`, {
      workspaceId: projectId,
      environment: "dev",
      expandSecretReferences: "true",
    });
    expect(deep.body.secret.secretValue).toBe("${K1}");
    const within = await http.get(`${RAW}/K10`, {
      workspaceId: projectId,
      environment: "dev",
      expandSecretReferences: "true",
    });
    expect(within.body.secret.secretValue).toBe("end");
  });

  it("11: viewSecretValue=false masks every value", async () => {
    const { http, projectId } = await createSecretsScope();
    await putSecret(http, projectId, "M", "secret");
    const list = await http.get(RAW, { workspaceId: projectId, environment: "dev", viewSecretValue: "false" });
    expect(list.body.secrets[0]).toMatchObject({ secretValue: "<hidden-by-infisical>", secretValueHidden: true });
  });

  it("12: an unreadable value fails the list of its folder but is dropped below it", async () => {
    const scope = await createSecretsScope();
    const { http, projectId, tenant } = scope;
    await createFolder(tenant, projectId, "dev", "/", "sub");
    await putSecret(http, projectId, "OPEN", "o");
    await putSecret(http, projectId, "CLOSED", "c", { secretPath: "/sub" });
    const reader = await identityWithRules(scope, [
      { subject: "secrets", action: ["describeSecret"], inverted: false },
      { subject: "secrets", action: ["readValue"], inverted: false, conditions: { secretPath: "/" } },
    ]);
    const recursive = await reader.http.get(RAW, { workspaceId: projectId, environment: "dev", recursive: "true" });
    expect(recursive.status).toBe(200);
    expect((recursive.body.secrets as { secretKey: string }[]).map((s) => s.secretKey)).toEqual(["OPEN"]);
    const sub = await reader.http.get(RAW, { workspaceId: projectId, environment: "dev", secretPath: "/sub" });
    expect(sub).toMatchObject({ status: 403, body: { error: "PermissionDenied" } });
    const masked = await reader.http.get(RAW, {
      workspaceId: projectId,
      environment: "dev",
      secretPath: "/sub",
      viewSecretValue: "false",
    });
    expect(masked.body.secrets[0]).toMatchObject({ secretKey: "CLOSED", secretValueHidden: true });
  });

  it("13: folder secrets beat imports; the list leaves precedence to clients", async () => {
    const { http, projectId, tenant } = await createSecretsScope();
    await createFolder(tenant, projectId, "dev", "/", "one");
    await createFolder(tenant, projectId, "dev", "/", "two");
    await putSecret(http, projectId, "K", "one", { secretPath: "/one" });
    await putSecret(http, projectId, "K", "two", { secretPath: "/two" });
    await addImport(tenant, projectId, "/", { environment: "dev", path: "/one" });
    await addImport(tenant, projectId, "/", { environment: "dev", path: "/two" });
    const base = { workspaceId: projectId, environment: "dev", include_imports: "true" };
    const list = await http.get(RAW, base);
    expect((list.body.imports as { secretPath: string }[]).map((i) => i.secretPath)).toEqual(["/one", "/two"]);
    expect((await http.get(`${RAW}/K`, { ...base, includeImports: "true" })).body.secret.secretValue).toBe("two");
    await putSecret(http, projectId, "K", "own");
    expect((await http.get(`${RAW}/K`, { ...base, includeImports: "true" })).body.secret.secretValue).toBe("own");
  });

  it("14: extra query keys are accepted", async () => {
    const { http, projectId } = await createSecretsScope();
    await putSecret(http, projectId, "E", "e");
    const res = await http.get(`${RAW}/E`, {
      workspaceId: projectId,
      environment: "dev",
      secretName: "E",
      includeImports: "false",
      includePersonalOverrides: "true",
      somethingElse: "1",
    });
    expect(res.status).toBe(200);
  });

  it("15: v4 list and get send an ETag; a matching If-None-Match is 304", async () => {
    const { http, projectId } = await createSecretsScope();
    await putSecret(http, projectId, "ET", "1");
    const one = await http.get("/api/v4/secrets/ET", { projectId, environment: "dev" });
    const etag = one.headers.get("etag")!;
    expect(etag).toMatch(/^".+"$/);
    expect(
      (await http.get("/api/v4/secrets/ET", { projectId, environment: "dev" }, { "if-none-match": etag })).status,
    ).toBe(304);
    await http.patch(`${RAW}/ET`, { workspaceId: projectId, environment: "dev", secretValue: "2" });
    expect(
      (await http.get("/api/v4/secrets/ET", { projectId, environment: "dev" }, { "if-none-match": etag })).status,
    ).toBe(200);
  });
});
