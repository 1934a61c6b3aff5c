import { randomBytes } from "node:crypto";
import pg from "pg";

/**
 * A database of its own for a test worker: a fresh PostgreSQL database on the DATABASE_URL server,
 * or undefined for an in-memory PGlite.
 */
export const createTestDatabaseUrl = async (): Promise<string | undefined> => {
  const adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) return undefined;
  const name = `keyward_test_${process.pid}_${randomBytes(4).toString("hex")}`;
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`create database ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
};
