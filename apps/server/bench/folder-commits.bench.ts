import { performance } from "node:perf_hooks";
import pg from "pg";
import { createKeywardClient, type KeywardClient } from "@keyward/client";
import { setupOk } from "./lib/endpoint";
import { startKeyward } from "./lib/keyward";

/**
 * What recording folder commits costs writes (the trigger on secret_versions), and how fast the
 * point-in-time reads are on a large folder. Runs on PostgreSQL: the same writes with the trigger
 * enabled and disabled, in alternating rounds; then a commit list, a compare and a rollback on a
 * folder of 1,000 secrets with 200 commits; then a deleted folder of 1,000 secrets brought back by a
 * rollback of its parent, and folder creation with the folder-version trigger enabled and disabled.
 */
const SECRETS = 1_000;
const SINGLE_WRITES = 200;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const timed = async (run: () => Promise<unknown>) => {
  const start = performance.now();
  await run();
  return performance.now() - start;
};

const writesOnce = async (admin: KeywardClient, projectId: string, folder: string) => {
  const scope = { projectId, environment: "dev", secretPath: `/${folder}` };
  setupOk(
    await admin.folders.create({ body: { workspaceId: projectId, environment: "dev", path: "/", name: folder } }),
  );
  const names = Array.from({ length: SECRETS }, (_, i) => `KEY_${i}`);
  const create = await timed(async () =>
    setupOk(
      await admin.secretsV4.batchCreate({
        body: { ...scope, secrets: names.map((secretKey) => ({ secretKey, secretValue: "v1", secretComment: "" })) },
      }),
    ),
  );
  const update = await timed(async () =>
    setupOk(
      await admin.secretsV4.batchUpdate({
        body: { ...scope, secrets: names.map((secretKey) => ({ secretKey, secretValue: "v2" })) },
      }),
    ),
  );
  const singles: number[] = [];
  for (let i = 0; i < SINGLE_WRITES; i += 1)
    singles.push(
      await timed(async () =>
        setupOk(
          await admin.secretsV4.update({
            params: { secretName: names[i % SECRETS]! },
            body: { ...scope, secretValue: `v${i + 3}` },
          }),
        ),
      ),
    );
  return { create, update, single: median(singles) };
};

const main = async () => {
  const target = await startKeyward("postgres");
  const admin = createKeywardClient({ baseUrl: target.url, token: target.adminToken });
  const sql = new pg.Client({ connectionString: target.databaseUrl });
  await sql.connect();
  try {
    const { project } = setupOk(await admin.projects.create({ body: { projectName: "commits-bench" } }));
    const figures: Record<string, { create: number[]; update: number[]; single: number[] }> = {
      on: { create: [], update: [], single: [] },
      off: { create: [], update: [], single: [] },
    };
    await writesOnce(admin, project.id, "warmup");
    for (let round = 0; round < ROUNDS; round += 1)
      for (const mode of ["on", "off"] as const) {
        await sql.query(
          `alter table secret_versions ${mode === "on" ? "enable" : "disable"} trigger secret_versions_commit`,
        );
        const r = await writesOnce(admin, project.id, `f${round}${mode}`);
        figures[mode]!.create.push(r.create);
        figures[mode]!.update.push(r.update);
        figures[mode]!.single.push(r.single);
      }
    await sql.query("alter table secret_versions enable trigger secret_versions_commit");
    console.log(`writes (median of ${ROUNDS} rounds, PostgreSQL 15): commit trigger on | off`);
    for (const what of ["create", "update", "single"] as const)
      console.log(
        `  ${what === "single" ? `one-secret update (median of ${SINGLE_WRITES})` : `batch ${what} of ${SECRETS}`}: ${median(figures.on![what]).toFixed(1)} ms | ${median(figures.off![what]).toFixed(1)} ms`,
      );

    const query = { projectId: project.id, environment: "dev", path: "/f0on" };
    const { commits: oldest, total } = setupOk(await admin.pit.list({ query: { ...query, sort: "asc", limit: 2 } }));
    const target0 = oldest[1]!;
    const reads = { list: [] as number[], compare: [] as number[] };
    for (let i = 0; i < 20; i += 1) {
      reads.list.push(await timed(async () => setupOk(await admin.pit.list({ query }))));
      reads.compare.push(
        await timed(async () =>
          setupOk(
            await admin.pit.compare({
              params: { commitId: target0.id },
              query: { projectId: project.id, environment: "dev", folderId: target0.folderId },
            }),
          ),
        ),
      );
    }
    const rollback = await timed(async () =>
      setupOk(
        await admin.pit.rollback({
          params: { commitId: target0.id },
          body: { projectId: project.id, environment: "dev", folderId: target0.folderId, deepRollback: false },
        }),
      ),
    );
    console.log(`a folder of ${SECRETS} secrets and ${total} commits:`);
    console.log(`  commit list (page of 20): ${median(reads.list).toFixed(1)} ms`);
    console.log(`  compare to its first write (${SECRETS} updates): ${median(reads.compare).toFixed(1)} ms`);
    console.log(`  rollback of ${SECRETS} secrets: ${rollback.toFixed(0)} ms`);

    // A deleted folder brought back: the root's commit before the deletion, compared then rolled back to.
    setupOk(
      await admin.folders.delete({
        params: { folderIdOrName: "f1on" },
        body: { workspaceId: project.id, environment: "dev", path: "/" },
      }),
    );
    const rootQuery = { projectId: project.id, environment: "dev", path: "/" };
    const [, before] = setupOk(await admin.pit.list({ query: rootQuery })).commits;
    const restore = { projectId: project.id, environment: "dev", folderId: before!.folderId };
    const compareRestore = await timed(async () =>
      setupOk(await admin.pit.compare({ params: { commitId: before!.id }, query: restore })),
    );
    let restored: unknown;
    const rollbackRestore = await timed(async () => {
      restored = setupOk(
        await admin.pit.rollback({ params: { commitId: before!.id }, body: { ...restore, deepRollback: false } }),
      );
    });
    console.log(`a deleted folder of ${SECRETS} secrets brought back by a rollback of its parent:`);
    console.log(
      `  compare: ${compareRestore.toFixed(0)} ms, rollback: ${rollbackRestore.toFixed(0)} ms (${JSON.stringify(restored)})`,
    );

    // What recording folder versions costs a folder's creation (the trigger on secret_folders).
    const creates = { on: [] as number[], off: [] as number[] };
    for (let i = 0; i < 40; i += 1) {
      const mode = i % 2 === 0 ? "on" : "off";
      await sql.query(
        `alter table secret_folders ${mode === "on" ? "enable" : "disable"} trigger secret_folders_version`,
      );
      creates[mode].push(
        await timed(async () =>
          setupOk(
            await admin.folders.create({
              body: { workspaceId: project.id, environment: "dev", path: "/", name: `c${i}` },
            }),
          ),
        ),
      );
    }
    await sql.query("alter table secret_folders enable trigger secret_folders_version");
    console.log(
      `folder creation (median of 20 each): version trigger on ${median(creates.on).toFixed(1)} ms | off ${median(creates.off).toFixed(1)} ms`,
    );
  } finally {
    await sql.end();
    await target.stop();
  }
};

await main();
