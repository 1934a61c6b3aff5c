import { beforeAll, describe, expect, it } from "vitest";
import { ok } from "@keyward/client";
import { admin, createScope, keyward } from "./helpers";

let scope: Awaited<ReturnType<typeof createScope>>;
beforeAll(async () => {
  scope = await createScope();
  const client = admin();
  const projectId = scope.project.id;
  await ok(client.folders.create({ body: { workspaceId: projectId, environment: "staging", path: "/", name: "app" } }));
  await ok(
    client.secretsV4.batchCreate({
      body: {
        projectId,
        environment: "dev",
        secrets: [
          { secretKey: "DB_HOST", secretValue: "dev-db" },
          { secretKey: "API_KEY", secretValue: "k" },
        ],
      },
    }),
  );
  await ok(
    client.secretsV4.batchCreate({
      body: {
        projectId,
        environment: "staging",
        secretPath: "/app",
        secrets: [{ secretKey: "DB_PASSWORD", secretValue: "staging-pw" }],
      },
    }),
  );
});

describe("keyward secrets search", () => {
  it("finds keys over environments and folders, with filters, values and JSON", async () => {
    const projectId = ["--project-id", scope.project.id];
    const text = await keyward(["secrets", "search", "db", ...projectId], { env: scope.env });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toBe("dev:/  DB_HOST\nstaging:/app  DB_PASSWORD\n");

    const valued = await keyward(["secrets", "search", "DB_*", ...projectId, "--env", "staging", "--values"], {
      env: scope.env,
    });
    expect(valued.stdout).toBe('staging:/app  DB_PASSWORD="staging-pw"\n');

    const json = await keyward(["secrets", "search", "-", ...projectId, "--path", "/app", "--json"], {
      env: scope.env,
    });
    const body = JSON.parse(json.stdout) as { secrets: { secretKey: string; secretValueHidden: boolean }[] };
    expect(body.secrets.map((s) => s.secretKey)).toEqual(["DB_PASSWORD"]);
    expect(body.secrets[0]!.secretValueHidden).toBe(true);

    const bad = await keyward(["secrets", "search", "DB_[", ...projectId], { env: scope.env });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain("400");
  });
});
