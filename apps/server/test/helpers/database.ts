import { createFreshDatabase } from "@keyward/test-services";

/**
 * A database of its own for a test worker: a fresh PostgreSQL database on the DATABASE_URL server,
 * or undefined for an in-memory PGlite.
 */
export const createTestDatabaseUrl = async (): Promise<string | undefined> => {
  const adminUrl = process.env.DATABASE_URL;
  return adminUrl ? createFreshDatabase(adminUrl, "keyward_test") : undefined;
};
