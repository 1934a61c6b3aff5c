import type { Database } from "../db/database";
import type { Logger } from "../lib/logger";
import { isInstanceInitialized } from "../modules/bootstrap/bootstrap.repository";

/** The URL a client on this machine reaches the server at: a wildcard address means loopback. */
export const serverUrl = (host: string, port: number) => {
  const reachable = host === "0.0.0.0" ? "127.0.0.1" : host === "::" ? "::1" : host;
  return `http://${reachable.includes(":") ? `[${reachable}]` : reachable}:${port}`;
};

/**
 * Once the server listens: the URL it serves and, while the instance is not set up, how to set it
 * up. A failed look-up only skips the hint.
 */
export const announceServing = async (logger: Logger, db: Database, url: string, fields: Record<string, unknown>) => {
  logger.info({ ...fields, url }, `keyward serving ${url}`);
  const initialized = await isInstanceInitialized(db).catch(() => true);
  if (!initialized)
    logger.warn(
      { url },
      `keyward is not set up yet: open ${url}/ in a browser, or POST ${url}/api/v1/admin/bootstrap with {"email","organization"}`,
    );
};
