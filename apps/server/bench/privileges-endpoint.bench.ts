import { createKeywardClient } from "@keyward/client";
import { benchSettings, formatRow, startKeyward } from "./lib/keyward";
import { spawnServer } from "./lib/processes";
import { ensureWrk, measure, type LoadResult } from "./lib/wrk";

/**
 * Authenticated GET /api/v2/identity-project-additional-privilege/:id (issue 3 §5) at 32
 * connections, on PostgreSQL and on PGlite, beside a bare node:http server and the express +
 * ts-rest ceiling measured in the same run. Target: >= 45% of the ceiling, p99 <= 25 ms.
 */
ensureWrk();
const settings = benchSettings();
const results: { label: string; result: LoadResult }[] = [];

for (const [label, script] of [
  ["baseline: bare node:http", "bench/servers/bare.ts"],
  ["baseline: express + ts-rest", "bench/servers/express-ts-rest.ts"],
] as const) {
  const server = await spawnServer(script);
  results.push({ label, result: await measure({ url: `${server.url}/api/v1/identities/6f1c1d2e-8a4b-4c3d-9e2f-1a2b3c4d5e6f`, ...settings }) });
  await server.stop();
}

const ok = <T extends { status: number; body: unknown }>(res: T) => {
  if (res.status !== 200) throw new Error(`setup failed: ${JSON.stringify(res.body)}`);
  return res.body as Extract<T, { status: 200 }>["body"];
};

for (const database of ["postgres", "pglite"] as const) {
  const target = await startKeyward(database);
  try {
    const admin = createKeywardClient({ baseUrl: target.url, token: target.adminToken });
    const { project } = ok(await admin.projects.create({ body: { projectName: "bench" } }));
    const { identity } = ok(await admin.identities.create({ body: { name: "bench-target", organizationId: project.orgId, role: "no-access" } }));
    ok(await admin.projects.addIdentityMembership({ params: { projectId: project.id, identityId: identity.id }, body: { role: "viewer" } }));
    const { privilege } = ok(
      await admin.privileges.v2.create({
        body: {
          identityId: identity.id,
          projectId: project.id,
          permissions: [{ subject: "secrets", action: ["describeSecret", "readValue"], conditions: { environment: "dev", secretPath: { $glob: "/app/**" } } }],
          type: { isTemporary: false },
        },
      }),
    );
    results.push({
      label: `keyward GET privilege (${database})`,
      result: await measure({
        url: `${target.url}/api/v2/identity-project-additional-privilege/${privilege.id}`,
        headers: { authorization: `Bearer ${target.adminToken}` },
        ...settings,
      }),
    });
  } finally {
    await target.stop();
  }
}

const bare = results[0]!.result.rps;
const ceiling = results[1]!.result.rps;
console.log(`\n${settings.connections} connections, ${settings.seconds}s x ${settings.rounds} rounds (median), wrk -t1`);
for (const { label, result } of results) {
  console.log(formatRow(label, result, `${((result.rps / bare) * 100).toFixed(1)}% of bare, ${((result.rps / ceiling) * 100).toFixed(1)}% of express+ts-rest`));
}
