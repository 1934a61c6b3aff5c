import { createKeywardClient, type KeywardClient } from "@keyward/client";
import { setupOk } from "./lib/endpoint";
import { benchSettings, startKeyward } from "./lib/keyward";
import { denseLayers, referenceLine, repeatedChain } from "../test/helpers/reference-graphs";

/**
 * Reference expansion and trees on the graphs that grow with the paths through them rather than
 * with the secrets: a chain of eleven secrets each referencing the next k times (k^10 paths), ten
 * dense layers, and 1,000 secrets each referencing the next. Prints each request's wall time, its
 * status and answer size: every figure should grow with the secrets, not with the paths.
 */
const writeAll = async (admin: KeywardClient, projectId: string, secrets: Record<string, string>) => {
  const entries = Object.entries(secrets);
  for (let i = 0; i < entries.length; i += 1000)
    setupOk(
      await admin.secretsV4.batchCreate({
        body: {
          projectId,
          environment: "dev",
          secretPath: "/",
          secrets: entries.slice(i, i + 1000).map(([secretKey, secretValue]) => ({ secretKey, secretValue })),
        },
      }),
    );
};

for (const database of benchSettings().databases) {
  const target = await startKeyward(database);
  const admin = createKeywardClient({ baseUrl: target.url, token: target.adminToken });
  const time = async (label: string, path: string, query: Record<string, string>) => {
    const url = new URL(path, target.url);
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
    const started = performance.now();
    const res = await fetch(url, { headers: { authorization: `Bearer ${target.adminToken}` } });
    const body = await res.arrayBuffer();
    const ms = performance.now() - started;
    console.log(
      `${database.padEnd(8)} ${label.padEnd(52)} ${res.status}  ${ms.toFixed(1).padStart(8)} ms  ${(body.byteLength / 1024).toFixed(1).padStart(9)} KiB`,
    );
  };
  try {
    // Each graph with the secret at its top (expanded, reference tree) and at its bottom (dependency tree).
    const graphs: [string, Record<string, string>, string, string][] = [
      ["chain k=3", repeatedChain(3), "L0", "L10"],
      ["chain k=4", repeatedChain(4), "L0", "L10"],
      ["chain k=5", repeatedChain(5), "L0", "L10"],
      ["layers of 3", denseLayers(3), "N9_0", "BOTTOM"],
      ["layers of 4", denseLayers(4), "N9_0", "BOTTOM"],
      ["1,000 each referencing the next", referenceLine(1000), "C0", "C999"],
    ];
    for (const [label, secrets, top, bottom] of graphs) {
      const { project } = setupOk(await admin.projects.create({ body: { projectName: `bench-${label}` } }));
      await writeAll(admin, project.id, secrets);
      const q = { projectId: project.id, environment: "dev", secretPath: "/" };
      await time(`${label}: get ${top} expanded`, `/api/v4/secrets/${top}`, { ...q, expandSecretReferences: "true" });
      await time(`${label}: list expanded`, "/api/v4/secrets", { ...q, expandSecretReferences: "true" });
      await time(`${label}: reference tree of ${top}`, `/api/v4/secrets/${top}/secret-reference-tree`, q);
      await time(`${label}: dependency tree of ${bottom}`, `/api/v4/secrets/${bottom}/reference-dependency-tree`, q);
    }
  } finally {
    await target.stop();
  }
}
