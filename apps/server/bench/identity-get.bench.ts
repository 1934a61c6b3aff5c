import { benchEndpoint, setupOk } from "./lib/endpoint";

/** Distinct identities read in turn, so concurrent requests (and their batched lookups) hit different rows. */
const IDENTITIES = 64;

/**
 * Authenticated GET /api/v1/identities/:id at 32 connections. Target on PostgreSQL:
 * >= 45% of the express + ts-rest ceiling, p99 <= 25 ms; PGlite figures for the record.
 */
await benchEndpoint(`GET identity (${IDENTITIES} ids)`, async (admin) => {
  const { identities } = setupOk(await admin.identities.list({ query: {} }));
  const orgId = identities[0]!.orgId;
  const paths = [`/api/v1/identities/${identities[0]!.id}`];
  while (paths.length < IDENTITIES) {
    const { identity } = setupOk(
      await admin.identities.create({
        body: { name: `bench-${paths.length}`, organizationId: orgId, role: "no-access" },
      }),
    );
    paths.push(`/api/v1/identities/${identity.id}`);
  }
  return paths;
});
