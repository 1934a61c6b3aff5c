import type pg from "pg";

/** The secondary indexes and keys of audit_logs, as the migrations made them. */
export type SavedIndexes = { constraints: { name: string; def: string }[]; indexes: string[] };

/** Drop audit_logs' keys and indexes (bench only: rows then load without index maintenance). */
export const dropAuditIndexes = async (client: pg.Client): Promise<SavedIndexes> => {
  const constraints = (
    await client.query<{ name: string; def: string }>(
      `select conname as name, pg_get_constraintdef(oid) as def from pg_constraint
       where conrelid = 'audit_logs'::regclass and contype in ('p', 'u')`,
    )
  ).rows;
  const indexes = (
    await client.query<{ name: string; def: string }>(
      `select i.indexname as name, i.indexdef as def from pg_indexes i
       where i.tablename = 'audit_logs'
         and not exists (select 1 from pg_constraint c where c.conname = i.indexname and c.conrelid = 'audit_logs'::regclass)`,
    )
  ).rows;
  for (const c of constraints) await client.query(`alter table audit_logs drop constraint ${c.name}`);
  for (const i of indexes) await client.query(`drop index ${i.name}`);
  return { constraints, indexes: indexes.map((i) => i.def) };
};

/** Rebuild what `dropAuditIndexes` dropped, two builds at a time (one per core). */
export const restoreAuditIndexes = async (client: pg.Client, saved: SavedIndexes) => {
  const work = [
    ...saved.constraints.map((c) => `alter table audit_logs add constraint ${c.name} ${c.def}`),
    ...saved.indexes,
  ];
  const { host, port, user, database } = client;
  const lanes = await Promise.all(
    [0, 1].map(async () => {
      const { Client } = (await import("pg")).default;
      const lane = new Client({ host, port, user, database });
      await lane.connect();
      await lane.query("set maintenance_work_mem = '1GB'; set max_parallel_maintenance_workers = 0");
      return lane;
    }),
  );
  await Promise.all(
    lanes.map(async (lane) => {
      for (let next = work.shift(); next; next = work.shift()) await lane.query(next);
    }),
  );
  await Promise.all(lanes.map((lane) => lane.end()));
};

const LIST = `select id, created_at from audit_logs`;

/**
 * The list route's SQL per filter, first page and a cursor page, as PostgreSQL plans it for given
 * values and as a prepared statement's generic plan: which index each uses, and the time it took.
 */
export const explainListQueries = async (
  client: pg.Client,
  at: {
    orgId: string;
    projectId: string;
    span: { startDate: string; endDate: string };
    oneDay: { startDate: string; endDate: string };
    page: number;
  },
) => {
  const cases: [string, string, unknown[]][] = [
    [
      "project",
      "org_id = $1 and created_at >= $2 and created_at <= $3 and project_id = $4",
      [at.orgId, at.span.startDate, at.span.endDate, at.projectId],
    ],
    [
      "event type",
      "org_id = $1 and created_at >= $2 and created_at <= $3 and event_type in ($4)",
      [at.orgId, at.span.startDate, at.span.endDate, "event-type-8"],
    ],
    [
      "actor",
      "org_id = $1 and created_at >= $2 and created_at <= $3 and actor_type = $4 and actor_id = $5",
      [at.orgId, at.span.startDate, at.span.endDate, "identity", "actor-12"],
    ],
    [
      "date range",
      "org_id = $1 and created_at >= $2 and created_at <= $3",
      [at.orgId, at.oneDay.startDate, at.oneDay.endDate],
    ],
  ];
  console.log("\nplans (list SQL at the database; custom plan / generic plan of the prepared statement)");
  for (const [label, where, params] of cases) {
    const order = `order by created_at desc, id desc limit ${at.page}`;
    const edge = (
      await client.query<{ created_at: string; id: string }>(
        `select created_at::text, id from audit_logs where ${where} ${order} offset ${9 * at.page - 1}`,
        params,
      )
    ).rows[0];
    const n = params.length;
    const cursorWhere = `${where} and created_at <= $${n + 1}::timestamptz and (created_at < $${n + 1}::timestamptz or id < $${n + 2}::uuid)`;
    for (const [kind, text, values] of [
      ["first", `${LIST} where ${where} ${order}`, params],
      ["cursor", `${LIST} where ${cursorWhere} ${order}`, [...params, edge?.created_at, edge?.id]],
    ] as const) {
      if (kind === "cursor" && !edge) continue;
      const custom = await client.query<{ "QUERY PLAN": string }>(`explain (analyze, buffers, costs off) ${text}`, [
        ...values,
      ]);
      await client.query("set plan_cache_mode = force_generic_plan");
      await client.query(`prepare kw_explain as ${text}`);
      const literals = values.map((v) => `'${String(v)}'`).join(", ");
      const generic = await client.query<{ "QUERY PLAN": string }>(
        `explain (costs off) execute kw_explain(${literals})`,
      );
      await client.query("deallocate kw_explain");
      await client.query("reset plan_cache_mode");
      const indexes = (rows: { "QUERY PLAN": string }[]) =>
        rows
          .map((r) => r["QUERY PLAN"])
          .filter((line) => /Index|Sort|Seq Scan|Bitmap/.test(line))
          .map((line) =>
            line
              .trim()
              .replace(/^->\s*/, "")
              .replace(/ \(actual.*$/, ""),
          )
          .filter(
            (line) => !line.startsWith("Index Cond") && !line.startsWith("Sort Key") && !line.startsWith("Presorted"),
          )
          .join(" > ");
      const time = custom.rows.find((r) => r["QUERY PLAN"].startsWith("Execution Time"))?.["QUERY PLAN"] ?? "";
      console.log(`${`${label}, ${kind}`.padEnd(20)} ${time.padEnd(26)} custom: ${indexes(custom.rows)}`);
      console.log(`${"".padEnd(47)} generic: ${indexes(generic.rows)}`);
    }
  }
};
