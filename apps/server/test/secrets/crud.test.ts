import { describe, expect, it } from "vitest";
import { createSecretsScope, putSecret } from "./helpers";

describe("secrets v3/v4 CRUD", () => {
  it("creates, reads, updates, lists and deletes a secret", async () => {
    const { http, projectId } = await createSecretsScope();
    const created = await putSecret(http, projectId, "DB_URL", "  postgres://x \n", { secretComment: " note " });
    expect(created).toMatchObject({ secretKey: "DB_URL", version: 1 });
    const got = await http.get("/api/v3/secrets/raw/DB_URL", { workspaceId: projectId, environment: "dev" });
    expect(got.status).toBe(200);
    expect(got.body.secret).toMatchObject({
      secretValue: "postgres://x\n",
      secretComment: "note",
      secretPath: "/",
      secretValueHidden: false,
      tags: [],
    });
    const updated = await http.patch("/api/v3/secrets/raw/DB_URL", {
      workspaceId: projectId,
      environment: "dev",
      secretValue: "v2",
    });
    expect(updated.status).toBe(200);
    expect(updated.body.secret.version).toBe(2);
    const list = await http.get("/api/v4/secrets", { projectId, environment: "dev" });
    expect(list.status).toBe(200);
    expect((list.body.secrets as { secretValue: string }[]).map((s) => s.secretValue)).toEqual(["v2"]);
    expect(list.headers.get("etag")).toBeTruthy();
    const notModified = await http.get(
      "/api/v4/secrets",
      { projectId, environment: "dev" },
      { "if-none-match": list.headers.get("etag")! },
    );
    expect(notModified.status).toBe(304);
    const deleted = await http.delete("/api/v3/secrets/raw/DB_URL", { workspaceId: projectId, environment: "dev" });
    expect(deleted.status).toBe(200);
    expect(deleted.body.secret.secretValue).toBe("v2");
    const gone = await http.get("/api/v3/secrets/raw/DB_URL", { workspaceId: projectId, environment: "dev" });
    expect(gone.status).toBe(404);
  });
});
