import { startPostgres15 } from "@keyward/test-services";

/**
 * A PostgreSQL 15 cluster of its own that dynamic-secret tests lease real roles on, with password
 * login over TCP. Published as KEYWARD_TEST_PG_TARGET_URL (a superuser URL).
 */
export const startPostgresTarget = async () => {
  const target = await startPostgres15({ name: "pg-target", maxConnections: 300 });
  process.env.KEYWARD_TEST_PG_TARGET_URL = target.url;
  return target.stop;
};
