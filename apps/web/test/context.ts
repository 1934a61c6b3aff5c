import type { Seeded } from "./seed";
import type { TestCa } from "./services";

/**
 * What the global setup hands the tests: the seeded server's URL, the URL of a server nobody has set
 * up, the run's browser (to connect to), the OpenID provider's issuer, the outbound CA and the seeded ids.
 */
export type TestContext = {
  baseUrl: string;
  freshBaseUrl: string;
  /** The run's one Chromium (see launchBrowserServer): test files connect to it. */
  browserEndpoint: string;
  /** The OpenID provider people sign in at (single sign-on). */
  oidcIssuer: string;
  /** Where the seeded server's mail to @mail.test lands, one JSON file per message. */
  mailDir: string;
  /** The CA the seeded server trusts for outbound calls (OUTBOUND_EXTRA_CA_FILE): tests serve stand-ins with it. */
  peerCa: TestCa;
  /** The PostgreSQL 15 cluster the seed's dynamic secret reaches (superuser URL): tests make their own roles in it. */
  postgres: { url: string; host: string; port: number; password: string };
  seeded: Seeded;
};

export const CONTEXT_VARIABLE = "KEYWARD_WEB_TEST_CONTEXT";

export const testContext = (): TestContext => {
  const raw = process.env[CONTEXT_VARIABLE];
  if (!raw) throw new Error(`${CONTEXT_VARIABLE} is not set: the global setup did not run`);
  return JSON.parse(raw) as TestContext;
};
