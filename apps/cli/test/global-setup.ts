import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { keywardServerBundle, startPostgres15 } from "@keyward/test-services";
// The server's own test OpenID provider (a real `oidc-provider` issuer with a sign-in form).
import { startOidcProvider } from "../../server/test/services/oidc-provider";
import { startServer, type ServerProcess } from "./server-process";

/**
 * One real Keyward server per test run, the built server as a child process (the CLI never imports
 * server code), on a port the OS picks, with its own data folder.
 */
let server: ServerProcess | undefined;
let dataDir: string | undefined;

export default async function setup(project: TestProject) {
  // A real PostgreSQL for the lease commands to lease roles on (password login over TCP), a real OpenID
  // provider for people's single sign-on (`keyward login` without --method), and the server's build, at once.
  const [target, stopOidc] = await Promise.all([
    startPostgres15({ name: "cli-pg" }),
    startOidcProvider(),
    keywardServerBundle(),
  ]);
  dataDir = mkdtempSync(join(tmpdir(), "keyward-cli-server-"));
  server = await startServer({ port: 0, dataDir }).catch(async (error: unknown) => {
    target.stop();
    await stopOidc();
    throw error;
  });
  const url = server.url;
  const bootstrap = await fetch(`${url}/api/v1/admin/bootstrap`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: "admin@keyward.test", password: "cli-tests-password", organization: "cli" }),
  });
  if (bootstrap.status !== 200) throw new Error(`bootstrap failed: ${bootstrap.status} ${await bootstrap.text()}`);
  const body = (await bootstrap.json()) as {
    organization: { id: string; slug: string };
    identity: { id: string; credentials: { token: string } };
  };
  project.provide("keywardUrl", url);
  project.provide("adminToken", body.identity.credentials.token);
  project.provide("orgId", body.organization.id);
  project.provide("orgSlug", body.organization.slug);
  project.provide("oidcIssuer", process.env.KEYWARD_TEST_OIDC_ISSUER!);
  project.provide("pgTargetUrl", target.url);
  return async () => {
    await server?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    target.stop();
    await stopOidc();
  };
}

declare module "vitest" {
  export interface ProvidedContext {
    keywardUrl: string;
    adminToken: string;
    orgId: string;
    orgSlug: string;
    oidcIssuer: string;
    pgTargetUrl: string;
  }
}
