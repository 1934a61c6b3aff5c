import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { readFoldersWithImports, resolveImports } from "../../src/modules/secrets/imports/resolve-imports";
import { listVisibleSecretsOfFolders } from "../../src/modules/secrets/secret-source";
import { createSecretListsState } from "../../src/modules/secrets/secrets.state";
import { insertOrgUser } from "../helpers/structure";
import { addImport, createFolder, createSecretsScope, expectOk, putSecret } from "./helpers";

/**
 * A list with imports reads its own rows and its imports' rows in one statement after the import
 * graph. A folder both listed and imported (a recursive list whose root imports its own subfolder)
 * is read once, and its rows serve both parts of the answer.
 */
describe("a list's rows and its imports' rows, read together", () => {
  it("are the rows and groups of the separate reads, in two statements", async () => {
    const scope = await createSecretsScope();
    const { tenant, projectId } = scope;
    const { db } = tenant.app.deps;
    const app = await createFolder(tenant, projectId, "dev", "/", "app");
    const a = await createFolder(tenant, projectId, "dev", "/", "a");
    await createFolder(tenant, projectId, "dev", "/", "b");
    for (const [path, key] of [
      ["/app", "APP"],
      ["/app", "SHARED_KEY"],
      ["/a", "A"],
      ["/a", "SHARED_KEY"],
      ["/b", "B"],
    ] as const)
      await putSecret(scope.http, projectId, key, `${key} in ${path}`, { secretPath: path });
    // app -> a, b; a -> b: /b is reached twice, once in each group.
    await addImport(tenant, projectId, "/app", { environment: "dev", path: "/a" });
    await addImport(tenant, projectId, "/app", { environment: "dev", path: "/b" });
    await addImport(tenant, projectId, "/a", { environment: "dev", path: "/b" });
    // A person's personal secret in an imported folder stands in for the shared one of its key.
    const owner = await insertOrgUser(tenant);
    await db
      .insertInto("secrets")
      .values({
        id: randomUUID(),
        folder_id: a.id,
        key: "SHARED_KEY",
        type: "personal",
        user_id: owner.id,
        encrypted_fields: "d1:personal",
        encrypted_value: null,
        encrypted_comment: null,
        skip_multiline_encoding: false,
        reminder_note: null,
        reminder_repeat_days: null,
        metadata: "[]",
        actor_id: null,
        actor_type: null,
      })
      .execute();

    let statements = 0;
    const counted = db.withPlugin({
      transformQuery: ({ node }) => {
        statements += 1;
        return node;
      },
      transformResult: async ({ result }) => result,
    });
    for (const ownerId of [undefined, owner.id]) {
      statements = 0;
      const read = await readFoldersWithImports(counted, [app.id], ownerId);
      expect(statements).toBe(2);
      expect(read.rows).toEqual(await listVisibleSecretsOfFolders(db, [app.id], ownerId));
      expect(read.groups).toEqual(await resolveImports(db, [app.id], ownerId));
      expect(read.groups.map((g) => g.secrets.map((s) => `${s.secretPath}:${s.row.key}:${s.row.type}`))).toEqual([
        ["/a:A:shared", `/a:SHARED_KEY:${ownerId ? "personal" : "shared"}`, "/b:B:shared"],
        ["/b:B:shared"],
      ]);
    }
  });

  it("a recursive list whose root imports its own subfolder: the subfolder's values in both parts, built whole and streamed", async () => {
    const scope = await createSecretsScope();
    const { tenant, projectId } = scope;
    const deps = tenant.app.deps;
    await createFolder(tenant, projectId, "dev", "/", "sub");
    await putSecret(scope.http, projectId, "ROOT", "root");
    await putSecret(scope.http, projectId, "SUB", "sub", { secretPath: "/sub" });
    await putSecret(scope.http, projectId, "SUB_REF", "${SUB}-x", { secretPath: "/sub" });
    await addImport(tenant, projectId, "/", { environment: "dev", path: "/sub" });
    const saved = deps.secretLists;
    try {
      // One row makes a list large (streamed), a thousand keeps it small (built whole).
      for (const largeRows of [1000, 1]) {
        deps.secretLists = createSecretListsState({ largeRows, slots: 1, queueTimeoutMs: 20_000 }).secretLists;
        const body = expectOk(
          await tenant.admin.secretsV4.list({
            query: {
              projectId,
              environment: "dev",
              secretPath: "/",
              recursive: "true",
              includeImports: "true",
              expandSecretReferences: "true",
            },
          }),
        );
        const pairs = (secrets: { secretKey: string; secretValue: string }[]) =>
          secrets.map((s) => [s.secretKey, s.secretValue]).sort(([x], [y]) => x!.localeCompare(y!));
        expect(pairs(body.secrets)).toEqual([
          ["ROOT", "root"],
          ["SUB", "sub"],
          ["SUB_REF", "sub-x"],
        ]);
        expect(body.secrets.find((s) => s.secretKey === "SUB")).toMatchObject({ secretPath: "/sub" });
        expect(body.imports.map((group) => [group.secretPath, pairs(group.secrets)])).toEqual([
          [
            "/sub",
            [
              ["SUB", "sub"],
              ["SUB_REF", "sub-x"],
            ],
          ],
        ]);
      }
    } finally {
      deps.secretLists = saved;
    }
  });
});
