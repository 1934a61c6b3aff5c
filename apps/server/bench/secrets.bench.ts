import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { KeywardClient } from "@keyward/client";
import { benchEndpoint, setupOk } from "./lib/endpoint";
import { spawnServer } from "./lib/processes";

const SECRETS = 100;
const IMPORTS = 3;
const PER_IMPORT = 20;

/** A folder /app with 100 secrets and 3 imports of 20 secrets each; returns the project's and folders' ids. */
const prepareFolder = async (admin: KeywardClient) => {
  const { project } = setupOk(await admin.projects.create({ body: { projectName: "bench" } }));
  const scope = { projectId: project.id, environment: "dev" };
  const folderIds: string[] = [];
  for (const name of ["app", ...Array.from({ length: IMPORTS }, (_, i) => `shared-${i}`)]) {
    const body = { workspaceId: project.id, environment: "dev", path: "/", name };
    folderIds.push(setupOk(await admin.folders.create({ body })).folder.id);
  }
  setupOk(
    await admin.secretsV4.batchCreate({
      body: {
        ...scope,
        secretPath: "/app",
        secrets: Array.from({ length: SECRETS }, (_, i) => ({
          secretKey: `APP_SECRET_${i}`,
          secretValue: `value-${i}-${"x".repeat(40)}`,
          secretComment: `comment ${i}`,
        })),
      },
    }),
  );
  for (let i = 0; i < IMPORTS; i += 1) {
    setupOk(
      await admin.secretsV4.batchCreate({
        body: {
          ...scope,
          secretPath: `/shared-${i}`,
          secrets: Array.from({ length: PER_IMPORT }, (_, j) => ({
            secretKey: `SHARED_${i}_${j}`,
            secretValue: `shared-${i}-${j}`,
            secretComment: "",
          })),
        },
      }),
    );
    setupOk(
      await admin.secretImports.create({
        body: {
          workspaceId: project.id,
          environment: "dev",
          path: "/app",
          import: { environment: "dev", path: `/shared-${i}` },
        },
      }),
    );
  }
  const [folder, ...imports] = folderIds;
  return { projectId: project.id, folders: { folder: folder!, imports } };
};

/**
 * An authenticated v4 list of a folder with 100 secrets and 3 imports, and a get by
 * name, at 32 connections on PostgreSQL and PGlite, beside the express + ts-rest ceiling. Targets
 * on PostgreSQL: get >= 45% and list >= 15% of the ceiling, p99 <= 25 ms.
 */
await benchEndpoint(`GET v4 secret by name (64 names)`, async (admin) => {
  const { projectId } = await prepareFolder(admin);
  return Array.from(
    { length: 64 },
    (_, i) => `/api/v4/secrets/APP_SECRET_${i}?projectId=${projectId}&environment=dev&secretPath=%2Fapp`,
  );
});

/**
 * Beside the list, its floors (servers/list-floor.ts): the same response body built, serialised,
 * tagged and sent by node:http with no database, framework or permission check, once opening each
 * secret's sealed value and comment as Keyward does, once from values held in clear. What the
 * sealed floor reaches of the ceiling bounds what any list that keeps its values sealed per row can
 * reach; the gap between the floors is what decryption costs. On PostgreSQL a third floor reads the
 * list's rows with the list's own statements before sending the same body: the floor of a list that
 * reads its rows on every request (what is above it is the request's own work: authentication,
 * permissions, folder and import resolution, opening, expansion and the audit event).
 */
await benchEndpoint(`GET v4 list (${SECRETS} secrets + ${IMPORTS} imports)`, async (admin, { databaseUrl }) => {
  const { projectId, folders } = await prepareFolder(admin);
  const query = {
    projectId,
    environment: "dev",
    secretPath: "/app",
    includeImports: "true",
    expandSecretReferences: "true",
  } as const;
  const bodyFile = join(mkdtempSync(join(tmpdir(), "keyward-floor-")), "list.json");
  writeFileSync(bodyFile, JSON.stringify(setupOk(await admin.secretsV4.list({ query }))));
  const reading: Record<string, string> = databaseUrl
    ? { FLOOR_DATABASE_URL: databaseUrl, FLOOR_FOLDERS: JSON.stringify(folders) }
    : {};
  const floor = await spawnServer("bench/servers/list-floor.ts", { FLOOR_BODY: bodyFile, ...reading });
  return {
    paths: [`/api/v4/secrets?${new URLSearchParams(query).toString()}`],
    baselines: [
      { label: "list floor, sealed per row", server: floor, paths: ["/sealed"] },
      { label: "list floor, values in clear", server: floor, paths: ["/plain"] },
      ...(databaseUrl ? [{ label: "list floor, rows read, sealed", server: floor, paths: ["/sealed-read"] }] : []),
    ],
  };
});
