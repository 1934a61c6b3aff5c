import { beforeAll, describe, expect, inject, it } from "vitest";
import { ok } from "@keyward/client";
import { admin, createScope, keyward, unique } from "./helpers";
import { canLogin, postgresProvider } from "./postgres-target";

let scope: Awaited<ReturnType<typeof createScope>>;
beforeAll(async () => {
  scope = await createScope();
  const client = admin();
  await ok(
    client.folders.create({ body: { workspaceId: scope.project.id, environment: "dev", path: "/", name: "shared" } }),
  );
  await ok(
    client.secretsV4.batchCreate({
      body: {
        projectId: scope.project.id,
        environment: "dev",
        secretPath: "/shared",
        secrets: [
          { secretKey: "SHARED_ONLY", secretValue: "from-import" },
          { secretKey: "OVERRIDDEN", secretValue: "import-value" },
        ],
      },
    }),
  );
  await ok(
    client.secretImports.create({
      body: {
        workspaceId: scope.project.id,
        environment: "dev",
        path: "/",
        import: { environment: "dev", path: "/shared" },
      },
    }),
  );
});

describe("keyward secrets", () => {
  it("sets, reads, lists and deletes secrets", async () => {
    const set = await keyward(
      ["secrets", "set", ...scope.scope, "HOST=db.internal", "URL=postgres://${HOST}/app", "OVERRIDDEN=local"],
      { env: scope.env },
    );
    expect(set.code, set.stderr).toBe(0);

    const plain = await keyward(["secrets", "get", "HOST", ...scope.scope, "--plain"], { env: scope.env });
    expect(plain.stdout).toBe("db.internal\n");
    const json = await keyward(["secrets", "get", "URL", ...scope.scope, "--expand", "--output", "json"], {
      env: scope.env,
    });
    expect((JSON.parse(json.stdout) as { secretValue: string }).secretValue).toBe("postgres://db.internal/app");

    const list = await keyward(
      ["secrets", "list", ...scope.scope, "--include-imports", "--expand", "--output", "json"],
      { env: scope.env },
    );
    expect(JSON.parse(list.stdout)).toMatchObject({
      HOST: "db.internal",
      URL: "postgres://db.internal/app",
      SHARED_ONLY: "from-import",
      OVERRIDDEN: "local",
    });

    const plainList = await keyward(["secrets", "list", ...scope.scope], { env: scope.env });
    expect(plainList.stdout).not.toContain("SHARED_ONLY");

    const removed = await keyward(["secrets", "delete", ...scope.scope, "URL"], { env: scope.env });
    expect(removed.stdout).toBe("deleted URL\n");
    const missing = await keyward(["secrets", "get", "URL", ...scope.scope], { env: scope.env });
    expect(missing.code).toBe(1);
    expect(missing.stdout).toBe("");
    expect(missing.stderr).toContain("404");
  });

  it("merges several paths (later wins) and sub-folders with --recursive", async () => {
    await keyward(["secrets", "set", ...scope.scope, "HOST=db.internal", "OVERRIDDEN=local"], { env: scope.env });
    const paths = await keyward(
      ["secrets", "list", ...scope.scope, "--path", "/", "--path", "/shared", "--output", "json"],
      {
        env: scope.env,
      },
    );
    expect(JSON.parse(paths.stdout)).toMatchObject({
      HOST: "db.internal",
      SHARED_ONLY: "from-import",
      OVERRIDDEN: "import-value",
    });
    const recursive = await keyward(["secrets", "list", ...scope.scope, "--recursive", "--output", "json"], {
      env: scope.env,
    });
    expect(JSON.parse(recursive.stdout)).toMatchObject({
      HOST: "db.internal",
      SHARED_ONLY: "from-import",
      OVERRIDDEN: "local",
    });
  });

  it("refuses a malformed assignment and an unknown project with a message", async () => {
    const bad = await keyward(["secrets", "set", ...scope.scope, "NOEQUALS"], { env: scope.env });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("Expected KEY=VALUE");
    const env = await keyward(
      ["secrets", "list", "--project-id", "00000000-0000-0000-0000-000000000000", "--env", "dev"],
      {
        env: scope.env,
      },
    );
    expect(env.code).toBe(1);
    expect(env.stderr).toMatch(/keyward: 4\d\d/);
  });

  it("answers 403 to an identity without access to the project", async () => {
    const stranger = await createScope("no-access");
    const result = await keyward(["secrets", "list", ...scope.scope], { env: stranger.env });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/keyward: (403|404)/);
  });
});

describe("keyward export", () => {
  it("writes dotenv, JSON and YAML", async () => {
    await keyward(["secrets", "set", ...scope.scope, 'QUOTED=a "b" c'], { env: scope.env });
    const dotenv = await keyward(["export", ...scope.scope], { env: scope.env });
    expect(dotenv.stdout).toContain('QUOTED="a \\"b\\" c"');
    const json = await keyward(["export", ...scope.scope, "--format", "json"], { env: scope.env });
    expect(JSON.parse(json.stdout)).toMatchObject({ QUOTED: 'a "b" c' });
    const yaml = await keyward(["export", ...scope.scope, "--format", "yaml"], { env: scope.env });
    expect(yaml.stdout).toContain('"QUOTED": "a \\"b\\" c"');
    const wrong = await keyward(["export", ...scope.scope, "--format", "xml"], { env: scope.env });
    expect(wrong.code).not.toBe(0);
  });
});

describe("keyward run", () => {
  it("runs the command with the secrets and exits with its code", async () => {
    await keyward(["secrets", "set", ...scope.scope, "RUN_VALUE=hello"], { env: scope.env });
    const result = await keyward(
      [
        "run",
        ...scope.scope,
        "--include-imports",
        "--",
        process.execPath,
        "-e",
        "console.log(process.env.RUN_VALUE, process.env.SHARED_ONLY); process.exit(7)",
      ],
      { env: scope.env },
    );
    expect(result.stdout).toBe("hello from-import\n");
    expect(result.code).toBe(7);
  });

  it("passes signals to the command", async () => {
    const run = keyward(
      [
        "run",
        ...scope.scope,
        "--",
        process.execPath,
        "-e",
        "process.on('SIGTERM', () => process.exit(42)); console.log('ready'); setInterval(() => {}, 1000)",
      ],
      { env: scope.env },
    );
    await new Promise<void>((resolve) =>
      run.child.stdout.on("data", (c: Buffer) => c.toString().includes("ready") && resolve()),
    );
    run.child.kill("SIGTERM");
    expect((await run).code).toBe(42);
  });

  it("does not start the command when the token is wrong", async () => {
    const result = await keyward(["run", ...scope.scope, "--", process.execPath, "-e", "console.log('started')"], {
      env: { ...scope.env, KEYWARD_TOKEN: "nope" },
    });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
  });
});

describe("keyward dynamic-secrets lease", () => {
  const leaseScope = () => ["--project-slug", scope.project.slug, "--env", "dev"];

  it("reports the server's 404 for an unknown dynamic secret and lease", async () => {
    for (const args of [
      ["create", "no-such-secret"],
      ["renew", "00000000-0000-0000-0000-000000000000"],
      ["revoke", "00000000-0000-0000-0000-000000000000"],
    ]) {
      const result = await keyward(["dynamic-secrets", "lease", ...args, ...leaseScope()], { env: scope.env });
      expect(result.code, args.join(" ")).toBe(1);
      expect(result.stdout).toBe("");
      expect(result.stderr).toContain("404");
    }
  });

  it("creates, renews and revokes a lease on a real PostgreSQL, whose login works until revoked", async () => {
    const target = new URL(inject("pgTargetUrl"));
    const name = unique("pg");
    await ok(
      admin().dynamicSecrets.create({
        body: {
          projectSlug: scope.project.slug,
          environmentSlug: "dev",
          path: "/",
          name,
          provider: postgresProvider(target),
          defaultTTL: "1h",
          maxTTL: "1d",
        },
      }),
    );
    const lease = (args: string[]) =>
      keyward(["dynamic-secrets", "lease", ...args, ...leaseScope()], { env: scope.env });

    const created = await lease(["create", name, "--ttl", "10m", "--output", "json"]);
    expect(created.code, created.stderr).toBe(0);
    const { lease: issued, data } = JSON.parse(created.stdout) as {
      lease: { id: string; expireAt: string };
      data: { DB_USERNAME: string; DB_PASSWORD: string };
    };
    expect(canLogin(target.toString(), data.DB_USERNAME, data.DB_PASSWORD)).toBe(true);

    const text = await lease(["create", name]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^lease \S+ expires \S+\nDB_USERNAME=\S+\nDB_PASSWORD=\S+\n/);

    const renewed = await lease(["renew", issued.id, "--ttl", "30m", "--output", "json"]);
    expect(renewed.code, renewed.stderr).toBe(0);
    const after = JSON.parse(renewed.stdout) as { id: string; expireAt: string };
    expect(after.id).toBe(issued.id);
    expect(Date.parse(after.expireAt)).toBeGreaterThan(Date.parse(issued.expireAt));

    const revoked = await lease(["revoke", issued.id]);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toBe(`lease ${issued.id} revoked\n`);
    expect(canLogin(target.toString(), data.DB_USERNAME, data.DB_PASSWORD)).toBe(false);
    const again = await lease(["renew", issued.id]);
    expect(again.code).toBe(1);
    expect(again.stdout).toBe("");
  });
});
