import { SecretListResponseSchema, SecretReadSchema } from "@keyward/contract";
import { describe, expect, it } from "vitest";
import { addImport, createFolder, createSecretsScope, expectOk, putSecret } from "./helpers";

/** The hot reads skip ts-rest's response parsing, so their bodies must be exactly what the contract declares. */
describe("secret read responses", () => {
  it("lists and gets carry exactly the declared keys with the declared types", async () => {
    const { tenant, projectId, http } = await createSecretsScope();
    await createFolder(tenant, projectId, "dev", "/", "app");
    await createFolder(tenant, projectId, "dev", "/", "shared");
    const tag = expectOk(
      await tenant.admin.secretTags.projects.create({ params: { projectId }, body: { slug: "t", color: "" } }),
    ).tag;
    await putSecret(http, projectId, "BASE", "b", { secretPath: "/shared", secretComment: "from shared" });
    await putSecret(http, projectId, "A", "x ${dev.shared.BASE}", {
      secretPath: "/app",
      tagIds: [tag.id],
      secretMetadata: [{ key: "k", value: "v", isEncrypted: true }],
      secretReminderNote: "rotate",
    });
    await putSecret(http, projectId, "B", "${A}", { secretPath: "/app" });
    await addImport(tenant, projectId, "/app", { environment: "dev", path: "/shared" });
    const q = { projectId, environment: "dev", secretPath: "/app" };
    const variants: Record<string, string>[] = [
      { includeImports: "true", expandSecretReferences: "true" },
      { include_imports: "true", viewSecretValue: "false" },
    ];
    for (const flags of variants) {
      const list = await http.get("/api/v4/secrets", { ...q, ...flags });
      expect(list.status).toBe(200);
      expect(list.headers.get("content-type")).toContain("application/json");
      expect(SecretListResponseSchema.parse(list.body)).toEqual(list.body);
      expect(list.body.imports[0].secrets).toHaveLength(1);
      const v3 = await http.get("/api/v3/secrets/raw", { workspaceId: projectId, ...q, ...flags });
      expect(SecretListResponseSchema.parse(v3.body)).toEqual(v3.body);
    }
    for (const path of ["/api/v4/secrets/A", "/api/v3/secrets/raw/A"]) {
      const got = await http.get(path, { ...q, workspaceId: projectId });
      expect(got.status).toBe(200);
      expect(Object.keys(got.body)).toEqual(["secret"]);
      expect(SecretReadSchema.parse(got.body.secret)).toEqual(got.body.secret);
      expect(got.body.secret).toMatchObject({ secretValue: "x ${dev.shared.BASE}", secretReminderNote: "rotate" });
    }
  });
});
