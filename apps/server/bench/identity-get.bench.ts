import { benchEndpoint, setupOk } from "./lib/endpoint";

/**
 * Authenticated GET /api/v1/identities/:id (issue 2 §6) at 32 connections. Target on PostgreSQL:
 * >= 45% of the express + ts-rest ceiling, p99 <= 25 ms; PGlite figures for the record.
 */
await benchEndpoint("GET identity", async (admin) => {
  const { identities } = setupOk(await admin.identities.list({ query: {} }));
  return `/api/v1/identities/${identities[0]!.id}`;
});
