import { beforeAll, describe, expect, it } from "vitest";
import { ok } from "@keyward/client";
import { admin, createScope, keyward } from "./helpers";

let scope: Awaited<ReturnType<typeof createScope>>;
beforeAll(async () => {
  scope = await createScope();
  const client = admin();
  for (const [path, name] of [
    ["/", "app"],
    ["/", "empty"],
    ["/app", "nested"],
  ] as const) {
    await ok(client.folders.create({ body: { workspaceId: scope.project.id, environment: "dev", path, name } }));
  }
  await ok(
    client.secretsV4.batchCreate({
      body: {
        projectId: scope.project.id,
        environment: "dev",
        secretPath: "/app",
        secrets: [{ secretKey: "APP_VALUE", secretValue: "present" }],
      },
    }),
  );
});

const inProject = (env: string) => ["--project-id", scope.project.id, "--env", env];
const printStarted = ["--", process.execPath, "-e", "console.log('started', process.env.APP_VALUE ?? '-')"];

const missingEnvironment = () => `Environment 'nowhere' does not exist in project ${scope.project.id}`;
const missingFolder = (path: string) =>
  `Folder ${path} does not exist in environment 'dev' of project ${scope.project.id}`;

describe("keyward run where the environment or folder does not exist", () => {
  it("does not start the command for an unknown environment and names it and the project", async () => {
    const result = await keyward(["run", ...inProject("nowhere"), ...printStarted], { env: scope.env });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toBe(`keyward: ${missingEnvironment()}\n`);
  });

  it("does not start the command for a missing folder, at the top or nested, and names the path", async () => {
    for (const [path, named] of [
      ["/missing", "/missing"],
      ["/app/missing", "/app/missing"],
      ["app//missing/", "/app/missing"],
    ]) {
      const result = await keyward(["run", ...inProject("dev"), "--path", path!, ...printStarted], { env: scope.env });
      expect(result.code, path).toBe(1);
      expect(result.stdout).toBe("");
      expect(result.stderr).toBe(`keyward: ${missingFolder(named!)}\n`);
    }
  });

  it("fails when any of several paths is missing, even after one that has secrets", async () => {
    const result = await keyward(["run", ...inProject("dev"), "--path", "/app", "--path", "/gone", ...printStarted], {
      env: scope.env,
    });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain(missingFolder("/gone"));
  });

  it("fails for a missing folder with --recursive and for an unknown environment with --recursive", async () => {
    const folder = await keyward(["run", ...inProject("dev"), "--path", "/missing", "--recursive", ...printStarted], {
      env: scope.env,
    });
    expect(folder.code).toBe(1);
    expect(folder.stdout).toBe("");
    expect(folder.stderr).toContain(missingFolder("/missing"));

    const environment = await keyward(["run", ...inProject("nowhere"), "--recursive", ...printStarted], {
      env: scope.env,
    });
    expect(environment.code).toBe(1);
    expect(environment.stdout).toBe("");
    expect(environment.stderr).toContain("'nowhere'");
    expect(environment.stderr).toContain(scope.project.id);
  });

  it("runs the command in an existing empty folder, with a note on stderr", async () => {
    const result = await keyward(
      [
        "run",
        ...inProject("dev"),
        "--path",
        "/empty",
        "--",
        process.execPath,
        "-e",
        "console.log('started'); process.exit(3)",
      ],
      { env: scope.env },
    );
    expect(result.code).toBe(3);
    expect(result.stdout).toBe("started\n");
    expect(result.stderr).toBe(`keyward: no secrets in /empty (environment 'dev' of project ${scope.project.id})\n`);
  });

  it("runs the command in an empty folder whose sub-folders hold nothing either", async () => {
    const result = await keyward(
      ["run", ...inProject("dev"), "--path", "/app/nested", "--recursive", ...printStarted],
      {
        env: scope.env,
      },
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("started -\n");
    expect(result.stderr).toContain("no secrets in /app/nested or below");
  });

  it("runs the command in a folder with secrets without a note", async () => {
    const result = await keyward(["run", ...inProject("dev"), "--path", "/app", ...printStarted], { env: scope.env });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("started present\n");
    expect(result.stderr).toBe("");
  });
});

describe("keyward export where the environment or folder does not exist", () => {
  it("prints nothing and fails for an unknown environment or a missing folder, in every format", async () => {
    for (const format of ["dotenv", "json", "yaml"]) {
      const environment = await keyward(["export", ...inProject("nowhere"), "--format", format], { env: scope.env });
      expect(environment.code, format).toBe(1);
      expect(environment.stdout).toBe("");
      expect(environment.stderr).toBe(`keyward: ${missingEnvironment()}\n`);

      const folder = await keyward(["export", ...inProject("dev"), "--path", "/app/missing", "--format", format], {
        env: scope.env,
      });
      expect(folder.code, format).toBe(1);
      expect(folder.stdout).toBe("");
      expect(folder.stderr).toBe(`keyward: ${missingFolder("/app/missing")}\n`);
    }
  });

  it("exports an existing empty folder as empty, with a note on stderr", async () => {
    const dotenv = await keyward(["export", ...inProject("dev"), "--path", "/empty"], { env: scope.env });
    expect(dotenv.code).toBe(0);
    expect(dotenv.stdout).toBe("");
    expect(dotenv.stderr).toContain("no secrets in /empty");
    const json = await keyward(["export", ...inProject("dev"), "--path", "/empty", "--format", "json"], {
      env: scope.env,
    });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({});
  });

  it("exports the root of an existing environment that has no secrets", async () => {
    const result = await keyward(["export", ...inProject("staging")], { env: scope.env });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("no secrets in / (environment 'staging'");
  });
});

describe("keyward secrets list where the environment or folder does not exist", () => {
  it("fails with the same messages", async () => {
    const environment = await keyward(["secrets", "list", ...inProject("nowhere")], { env: scope.env });
    expect(environment.code).toBe(1);
    expect(environment.stderr).toBe(`keyward: ${missingEnvironment()}\n`);
    const folder = await keyward(["secrets", "list", ...inProject("dev"), "--path", "/missing", "--output", "json"], {
      env: scope.env,
    });
    expect(folder.code).toBe(1);
    expect(folder.stdout).toBe("");
    expect(folder.stderr).toBe(`keyward: ${missingFolder("/missing")}\n`);
  });
});
