import { keywardServerBundle } from "@keyward/test-services";

/**
 * The built server (see keywardServerBundle): files that start the real server as a process run its
 * bundle (KEYWARD_TEST_SERVER_MAIN), and each test app's new in-memory PGlite database copies the
 * migrated template beside it instead of running initdb and every migration again
 * (KEYWARD_TEST_PGLITE_TEMPLATE, left unset on a PostgreSQL run).
 */
export const startServerBundle = async () => {
  const bundle = await keywardServerBundle();
  process.env.KEYWARD_TEST_SERVER_MAIN = bundle.main;
  if (!process.env.DATABASE_URL) process.env.KEYWARD_TEST_PGLITE_TEMPLATE = bundle.template;
  return () => undefined;
};
