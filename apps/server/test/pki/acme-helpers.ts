import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app";
import { createTenant, type Tenant } from "../helpers/tenant";
import { ensureDebianPackages } from "../services/debian";
import { startTxtServer } from "./dns-txt-server";
import { ensureOpenssl } from "./pki-helpers";

/** Debian's certbot, installed when missing. */
export const ensureCertbot = () => ensureDebianPackages("/usr/bin/certbot", ["certbot"]);

export type CertbotRun = { code: number; output: string; dir: string };

/**
 * Run certbot with its config, work and log directories in a fresh temporary folder. Asynchronous,
 * so the app in this process keeps answering while certbot talks to it.
 */
export const certbot = (args: string[], dir = mkdtempSync(join(tmpdir(), "keyward-certbot-"))) =>
  new Promise<CertbotRun>((resolve) => {
    execFile(
      "/usr/bin/certbot",
      [
        ...args,
        "--non-interactive",
        "--config-dir",
        join(dir, "config"),
        "--work-dir",
        join(dir, "work"),
        "--logs-dir",
        join(dir, "logs"),
      ],
      { timeout: 120_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
        resolve({ code, output: `${stdout}${stderr}`, dir });
      },
    );
  });

export const readLive = (run: CertbotRun, name: string, file: string) =>
  readFileSync(join(run.dir, "config", "live", name, file), "utf8");

/**
 * An ACME suite: an app of its own whose dns-01 checks ask a loopback DNS server (ACME_DNS_RESOLVER),
 * and a tenant on it; the fields are set before the suite's first test.
 */
export const acmeDnsSuite = () => {
  const suite = {} as { app: TestApp; tenant: Tenant; dns: Awaited<ReturnType<typeof startTxtServer>> };
  beforeAll(async () => {
    ensureOpenssl();
    suite.dns = await startTxtServer();
    suite.app = await startTestApp({ ACME_DNS_RESOLVER: suite.dns.address });
    suite.tenant = await createTenant(suite.app);
  }, 120_000);
  afterAll(async () => {
    await suite.app?.close();
    await suite.dns?.close();
  });
  return suite;
};
