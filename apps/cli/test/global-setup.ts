import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { TestProject } from "vitest/node";
import { startPostgres15 } from "@keyward/test-services";
// The server's own test OpenID provider (a real `oidc-provider` issuer with a sign-in form).
import { startOidcProvider } from "../../server/test/services/oidc-provider";

/**
 * One real Keyward server per test run, started from the server's entry point as a child process
 * (the CLI never imports server code), on a port the OS picks, with its own data folder.
 */
let server: ChildProcess | undefined;
let dataDir: string | undefined;

const serverDir = fileURLToPath(new URL("../../server", import.meta.url));

const waitForPort = (child: ChildProcess) =>
  new Promise<number>((resolve, reject) => {
    let output = "";
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${output}`)), 60_000);
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      // The line that says the server listens: "keyward listening" or "keyward serving <url>".
      const match = /"port":(\d+)[^\n]*keyward (?:listening|serving)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.on("exit", (code) => reject(new Error(`server exited with ${code}:\n${output}`)));
  });

export default async function setup(project: TestProject) {
  // A real PostgreSQL for the lease commands to lease roles on (password login over TCP).
  const target = await startPostgres15({ name: "cli-pg" });
  // A real OpenID provider for people's single sign-on (`keyward login` without --method).
  const stopOidc = await startOidcProvider();
  dataDir = mkdtempSync(join(tmpdir(), "keyward-cli-server-"));
  server = spawn(join(serverDir, "node_modules/.bin/tsx"), ["src/main.ts"], {
    cwd: serverDir,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PORT: "0",
      HOST: "127.0.0.1",
      DATA_DIR: dataDir,
      LOG_LEVEL: "info",
      // The lease target listens on loopback.
      ALLOW_PRIVATE_OUTBOUND: "loopback",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const port = await waitForPort(server).catch(async (error: unknown) => {
    target.stop();
    await stopOidc();
    throw error;
  });
  const url = `http://127.0.0.1:${port}`;
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
    server?.kill("SIGTERM");
    await new Promise((resolve) => server?.once("exit", resolve));
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
