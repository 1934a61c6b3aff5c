import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { keywardServerBundle, listensOn } from "@keyward/test-services";
import { CONTEXT_VARIABLE, type TestContext } from "./context";
import { launchBrowserServer } from "./browser";
import { seed } from "./seed";
import {
  chromiumPath,
  createTestCa,
  freePort,
  freshDatabaseUrl,
  startOidcProvider,
  startPostgresTarget,
  startSmtpSink,
} from "./services";

const webDir = fileURLToPath(new URL("..", import.meta.url));
const serverDir = fileURLToPath(new URL("../../server", import.meta.url));
/** The console build the tests serve (see setup). */
const TEST_BUILD = ".test-build";

const waitForServer = async (child: ChildProcess, port: number, output: () => string) => {
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}:\n${output()}`);
    try {
      // Ours, not another suite's server that took the port between its pick and our bind.
      if ((await fetch(`http://127.0.0.1:${port}/api/status`)).ok && listensOn(child.pid!, port)) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`server did not start:\n${output()}`);
};

type Running = { baseUrl: string; stop: () => Promise<void> };

/**
 * The real server (built as `pnpm build` builds it, see keywardServerBundle) serving the built console,
 * on a free port with its own data (PGlite, or a fresh database when DATABASE_URL is set).
 */
const startServer = async (extraEnv: Record<string, string> = {}): Promise<Running> => {
  const dataDir = mkdtempSync(join(tmpdir(), "keyward-web-server-"));
  const databaseUrl = await freshDatabaseUrl(process.env.DATABASE_URL);
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  let output = "";
  const { main } = await keywardServerBundle();
  const server = spawn(process.execPath, [main], {
    cwd: serverDir,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PORT: String(port),
      HOST: "127.0.0.1",
      DATA_DIR: dataDir,
      ENCRYPTION_KEY: randomBytes(32).toString("base64"),
      LOG_LEVEL: "warn",
      ALLOW_PRIVATE_OUTBOUND: "loopback",
      PGLITE_SHARED_BUFFERS: "16MB",
      LEASE_REVOCATION_INTERVAL_MS: "1000",
      // People's access tokens live the shortest time allowed, so the console's renewal happens within a test.
      SESSION_ACCESS_TOKEN_TTL_S: "30",
      WEB_DIST_DIR: join(webDir, TEST_BUILD),
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
      ...extraEnv,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = once(server, "exit");
  const collect = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-8_000));
  server.stdout?.on("data", collect);
  server.stderr?.on("data", collect);
  const stop = async () => {
    if (server.exitCode === null) server.kill("SIGTERM");
    const killer = setTimeout(() => server.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(killer);
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await waitForServer(server, port, () => output);
  } catch (error) {
    server.kill("SIGKILL");
    throw error;
  }
  return { baseUrl, stop };
};

/**
 * Builds the console, then starts the browser, an OpenID provider and two servers serving that build: one
 * seeded through the typed client (trusting a test CA for outbound calls, so a test can serve an
 * outside system such as a secret sync's destination on loopback), and one nobody has set up yet.
 */
export default async function setup() {
  const chromium = chromiumPath();
  // As `pnpm build` does, in a process of its own: vitest's NODE_ENV=test would give React's development build.
  // Into a folder of its own: a `pnpm start` run by the server's suite at the same time rebuilds dist/.
  execFileSync(join(webDir, "node_modules/.bin/vite"), ["build", "--logLevel", "warn", "--outDir", TEST_BUILD], {
    cwd: webDir,
    env: { ...process.env, NODE_ENV: "production" },
    stdio: ["ignore", "ignore", "inherit"],
    timeout: 180_000,
  });
  const browser = await launchBrowserServer(chromium);
  const target = await startPostgresTarget();
  const stopProvider = await startOidcProvider();
  const oidcIssuer = process.env.KEYWARD_TEST_OIDC_ISSUER ?? "";
  // Mail to @mail.test is kept (as files the tests read); any other recipient is refused, so the
  // console's invitations to other addresses still show their links.
  const mailDir = mkdtempSync(join(tmpdir(), "keyward-web-mail-"));
  const mail = await startSmtpSink({ dir: mailDir, acceptDomain: "mail.test" });
  const peerCa = await createTestCa();
  const caDir = mkdtempSync(join(tmpdir(), "keyward-web-ca-"));
  const caFile = join(caDir, "ca.pem");
  writeFileSync(caFile, peerCa.caPem);
  const servers: Running[] = [];
  try {
    const started = await Promise.allSettled([
      startServer({ SMTP_URL: `smtp://127.0.0.1:${mail.port}`, OUTBOUND_EXTRA_CA_FILE: caFile }),
      startServer(),
    ]);
    for (const result of started) if (result.status === "fulfilled") servers.push(result.value);
    for (const result of started) if (result.status === "rejected") throw result.reason;
    const [seededServer, freshServer] = servers as [Running, Running];
    const context: TestContext = {
      baseUrl: seededServer.baseUrl,
      freshBaseUrl: freshServer.baseUrl,
      browserEndpoint: browser.wsEndpoint(),
      oidcIssuer,
      mailDir,
      peerCa,
      postgres: { url: target.url, host: target.host, port: target.port, password: target.password },
      seeded: await seed(seededServer.baseUrl, target),
    };
    // Test workers are forked after this and inherit the environment (as the server suite's services do).
    process.env[CONTEXT_VARIABLE] = JSON.stringify(context);
  } catch (error) {
    await Promise.all(servers.map((server) => server.stop()));
    await stopProvider();
    await mail.close();
    rmSync(caDir, { recursive: true, force: true });
    target.stop();
    await browser.close();
    throw error;
  }

  return async () => {
    await Promise.all(servers.map((server) => server.stop()));
    await stopProvider();
    await mail.close();
    rmSync(mailDir, { recursive: true, force: true });
    rmSync(caDir, { recursive: true, force: true });
    target.stop();
    await browser.close();
  };
}
