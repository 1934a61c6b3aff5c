import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { inject } from "vitest";
import { createKeywardClient, ok } from "@keyward/client";

// Built by the test script into a folder of its own: the README quick start (the server's suite, run at
// the same time) rebuilds dist/ with `pnpm pack:dist`.
export const BIN = fileURLToPath(new URL("../.test-build/keyward.js", import.meta.url));
export const url = () => inject("keywardUrl");
export const admin = () => createKeywardClient({ baseUrl: url(), token: inject("adminToken") });
export const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString("hex")}`;

export type CliResult = { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string };

/** Run the built binary with a clean environment: no KEYWARD_* unless given, its own config folder. */
export const keyward = (
  args: string[],
  {
    env = {},
    configDir = mkdtempSync(join(tmpdir(), "keyward-cli-config-")),
    input,
  }: { env?: Record<string, string>; configDir?: string; input?: string } = {},
) => {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, XDG_CONFIG_HOME: configDir, ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  child.stdin.end(input);
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  const done = new Promise<CliResult>((resolve) =>
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return Object.assign(done, { child });
};

/** A project, and an identity that is an admin of it with a token and a universal-auth client secret. */
type RoleRules = Parameters<ReturnType<typeof admin>["roles"]["create"]>[0]["body"]["permissions"];

/**
 * A project and an identity holding `role` in it; with `permissions`, a custom role of the project
 * holding just those rules (named `role`).
 */
export const createScope = async (role = "admin", permissions?: RoleRules) => {
  const client = admin();
  const { project } = await ok(client.projects.create({ body: { projectName: unique("cli") } }));
  if (permissions) {
    await ok(
      client.roles.create({
        params: { projectId: project.id },
        body: { slug: role, name: role, permissions },
      }),
    );
  }
  const { identity } = await ok(
    client.identities.create({ body: { name: unique("cli-id"), organizationId: inject("orgId"), role: "no-access" } }),
  );
  await ok(
    client.projects.addIdentityMembership({
      params: { projectId: project.id, identityId: identity.id },
      body: { role },
    }),
  );
  await ok(
    client.tokenAuth.attach({
      params: { identityId: identity.id },
      body: { accessTokenTTL: 3600, accessTokenMaxTTL: 7200 },
    }),
  );
  const { accessToken } = await ok(client.tokenAuth.createToken({ params: { identityId: identity.id }, body: {} }));
  const ua = await ok(client.universalAuth.attach({ params: { identityId: identity.id }, body: {} }));
  const { clientSecret } = await ok(
    client.universalAuth.createClientSecret({ params: { identityId: identity.id }, body: {} }),
  );
  const env = { KEYWARD_URL: url(), KEYWARD_TOKEN: accessToken };
  const scope = ["--project-id", project.id, "--env", "dev"];
  return {
    project,
    identity,
    token: accessToken,
    clientId: ua.identityUniversalAuth.clientId,
    clientSecret,
    env,
    scope,
  };
};

/** Write one secret at the root of a project's dev environment, as the admin. */
export const upsertDevSecret = (projectId: string, secretKey: string, secretValue: string) =>
  ok(
    admin().secretsV4.batchUpdate({
      body: {
        projectId,
        environment: "dev",
        secretPath: "/",
        mode: "upsert",
        secrets: [{ secretKey, secretValue }],
      },
    }),
  );
