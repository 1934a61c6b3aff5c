import { createFreshDatabase, ensureDebianPackage, startPostgres15 } from "@keyward/test-services";

export { freePort } from "@keyward/test-services";
/** The server suite's OpenID provider (the `oidc-provider` package with a sign-in form): people sign in there. */
export { startOidcProvider } from "../../server/test/services/oidc-provider";
export { startSmtpSink } from "../../server/test/helpers/smtp-sink";
/** The server suite's test CA (a CA and a loopback server certificate) for the HTTPS stand-ins of outside systems. */
export { createTestCa, type TestCa } from "../../server/test/services/workload-peers";

/**
 * Debian's Chromium headless shell: the browser the tests drive (nothing is downloaded by playwright).
 * It is Chromium's engine without the desktop browser around it, as playwright's own headless runs
 * use; two of the suites on the full browser (`CHROMIUM_PATH=/usr/bin/chromium`) took 45% more CPU.
 */
export const chromiumPath = () => {
  const path = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium-headless-shell";
  if (!process.env.CHROMIUM_PATH) ensureDebianPackage(path, ["chromium-headless-shell"]);
  return path;
};

/**
 * A PostgreSQL 15 cluster the dynamic secret leases real roles on (password login over TCP). Returns
 * its superuser URL, address, password and a stop function.
 */
export const startPostgresTarget = () => startPostgres15({ name: "web-pg" });

/** A fresh database on the DATABASE_URL server for this run, or undefined for embedded PGlite. */
export const freshDatabaseUrl = async (adminUrl: string | undefined) =>
  adminUrl ? createFreshDatabase(adminUrl, "keyward_web") : undefined;
