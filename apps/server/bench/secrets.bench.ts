import type { KeywardClient } from "@keyward/client";
import { benchEndpoint, setupOk } from "./lib/endpoint";

const SECRETS = 100;
const IMPORTS = 3;
const PER_IMPORT = 20;

/** A folder /app with 100 secrets and 3 imports of 20 secrets each; returns the project id. */
const prepareFolder = async (admin: KeywardClient) => {
  const { project } = setupOk(await admin.projects.create({ body: { projectName: "bench" } }));
  const scope = { projectId: project.id, environment: "dev" };
  for (const name of ["app", ...Array.from({ length: IMPORTS }, (_, i) => `shared-${i}`)])
    setupOk(await admin.folders.create({ body: { workspaceId: project.id, environment: "dev", path: "/", name } }));
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
  return project.id;
};

/**
 * Issue 15 §4: an authenticated v4 list of a folder with 100 secrets and 3 imports, and a get by
 * name, at 32 connections on PostgreSQL and PGlite, beside the express + ts-rest ceiling. Targets
 * on PostgreSQL: get >= 45% and list >= 15% of the ceiling, p99 <= 25 ms.
 */
await benchEndpoint(`GET v4 secret by name (64 names)`, async (admin) => {
  const projectId = await prepareFolder(admin);
  return Array.from(
    { length: 64 },
    (_, i) => `/api/v4/secrets/APP_SECRET_${i}?projectId=${projectId}&environment=dev&secretPath=%2Fapp`,
  );
});

await benchEndpoint(`GET v4 list (${SECRETS} secrets + ${IMPORTS} imports)`, async (admin) => {
  const projectId = await prepareFolder(admin);
  return [
    `/api/v4/secrets?projectId=${projectId}&environment=dev&secretPath=%2Fapp&includeImports=true&expandSecretReferences=true`,
  ];
});
