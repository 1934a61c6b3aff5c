import { randomBytes } from "node:crypto";
import pg from "pg";

/**
 * A fresh, empty database on the server `adminUrl` points at (a superuser URL), named
 * `<prefix>_<pid>_<random>` so parallel workers and runs never share one; returns its URL.
 */
export const createFreshDatabase = async (adminUrl: string, prefix: string) => {
  const name = `${prefix}_${process.pid}_${randomBytes(4).toString("hex")}`;
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
