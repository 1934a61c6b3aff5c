import { sql } from "kysely";
import type { Database } from "../../../db/database";
import type { Tx } from "../../../db/transaction";
import type { ChangeConflict } from "../../../db/tables/approvals";

/** Change requests, their commits and reviews. */
const REQUEST_COLUMNS = [
  "id",
  "slug",
  "project_id",
  "policy_id",
  "folder_id",
  "environment",
  "secret_path",
  "status",
  "has_merged",
  "conflicts",
  "committer_type",
  "committer_id",
  "status_changed_by_type",
  "status_changed_by_id",
  "bypass_reason",
  "merged_at",
  "created_at",
  "updated_at",
] as const;

export const findRequest = (db: Database, requestId: string) =>
  db.selectFrom("secret_approval_requests").select(REQUEST_COLUMNS).where("id", "=", requestId).executeTakeFirst();
export type RequestRow = NonNullable<Awaited<ReturnType<typeof findRequest>>>;

export const lockRequest = (trx: Tx, requestId: string) =>
  trx
    .selectFrom("secret_approval_requests")
    .select(REQUEST_COLUMNS)
    .where("id", "=", requestId)
    .forUpdate()
    .executeTakeFirst();

export type RequestFilter = {
  projectId: string;
  environment?: string;
  status?: string;
  committerId?: string;
  search?: string;
  /** Only requests committed by these principals or reviewable by them (by policy). */
  visibleTo?: { committer: { type: string; id: string }; policyIds: readonly string[] };
  /** Only requests of these policies (the ones the caller reviews). */
  policyIds?: readonly string[];
};

const filtered = (db: Database, f: RequestFilter) => {
  let query = db.selectFrom("secret_approval_requests as r").where("r.project_id", "=", f.projectId);
  if (f.environment !== undefined) query = query.where("r.environment", "=", f.environment);
  if (f.status !== undefined) query = query.where("r.status", "=", f.status);
  if (f.committerId !== undefined) query = query.where("r.committer_id", "=", f.committerId);
  if (f.search !== undefined && f.search !== "") {
    const like = `%${f.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    query = query.where((eb) =>
      eb.or([
        eb("r.slug", "ilike", like),
        eb("r.secret_path", "ilike", like),
        eb.exists(
          eb
            .selectFrom("secret_approval_request_commits as c")
            .select("c.id")
            .whereRef("c.request_id", "=", "r.id")
            .where("c.secret_key", "ilike", like),
        ),
      ]),
    );
  }
  if (f.policyIds !== undefined) {
    const ids = [...f.policyIds];
    query = ids.length === 0 ? query.where(sql<boolean>`false`) : query.where("r.policy_id", "in", ids);
  }
  if (f.visibleTo !== undefined) {
    const { committer, policyIds } = f.visibleTo;
    query = query.where((eb) =>
      eb.or([
        eb.and([eb("r.committer_type", "=", committer.type), eb("r.committer_id", "=", committer.id)]),
        ...(policyIds.length > 0 ? [eb("r.policy_id", "in", [...policyIds])] : []),
      ]),
    );
  }
  return query;
};

export const pageRequests = async (db: Database, f: RequestFilter, limit: number, offset: number) => {
  const [rows, total] = await Promise.all([
    filtered(db, f)
      .select(REQUEST_COLUMNS.map((c) => `r.${c}` as const))
      .orderBy("r.created_at", "desc")
      .orderBy("r.id")
      .limit(limit)
      .offset(offset)
      .execute(),
    filtered(db, f)
      .select((eb) => eb.fn.countAll<string>().as("n"))
      .executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.n) };
};

export const countRequestsByStatus = async (db: Database, f: RequestFilter & { policyId?: string }) => {
  let query = filtered(db, f);
  if (f.policyId !== undefined) query = query.where("r.policy_id", "=", f.policyId);
  const rows = await query
    .select(["r.status", (eb) => eb.fn.countAll<string>().as("n")])
    .groupBy("r.status")
    .execute();
  const of = (status: string) => Number(rows.find((r) => r.status === status)?.n ?? 0);
  return { open: of("open"), closed: of("close") };
};

export const insertRequest = (
  trx: Tx,
  values: {
    slug: string;
    project_id: string;
    policy_id: string;
    folder_id: string;
    environment: string;
    secret_path: string;
    committer_type: string;
    committer_id: string;
  },
) => trx.insertInto("secret_approval_requests").values(values).returning(REQUEST_COLUMNS).executeTakeFirstOrThrow();

export const updateRequestRow = (
  trx: Tx,
  requestId: string,
  values: {
    status?: string;
    has_merged?: boolean;
    conflicts?: ChangeConflict[];
    status_changed_by_type?: string | null;
    status_changed_by_id?: string | null;
    bypass_reason?: string | null;
    merged_at?: Date;
  },
) =>
  trx
    .updateTable("secret_approval_requests")
    .set({
      ...values,
      conflicts: values.conflicts === undefined ? undefined : JSON.stringify(values.conflicts),
      updated_at: sql`now()`,
    })
    .where("id", "=", requestId)
    .returning(REQUEST_COLUMNS)
    .executeTakeFirstOrThrow();

/** Closes every open request of a retired policy. */
export const closeOpenRequestsOfPolicy = (trx: Tx, policyId: string, by: { type: string; id: string }) =>
  trx
    .updateTable("secret_approval_requests")
    .set({ status: "close", status_changed_by_type: by.type, status_changed_by_id: by.id, updated_at: sql`now()` })
    .where("policy_id", "=", policyId)
    .where("status", "=", "open")
    .execute();

export type CommitValues = {
  id: string;
  position: number;
  op: string;
  secret_key: string;
  new_secret_key: string | null;
  secret_id: string | null;
  secret_version: number | null;
  encrypted_value: string | null;
  encrypted_comment: string | null;
  tag_ids: string[] | null;
  metadata: { key: string; value: string; isEncrypted: boolean }[] | null;
  skip_multiline_encoding: boolean | null;
};

export const insertCommits = (trx: Tx, requestId: string, commits: readonly CommitValues[]) =>
  trx
    .insertInto("secret_approval_request_commits")
    .values(
      commits.map((c) => ({
        ...c,
        request_id: requestId,
        tag_ids: c.tag_ids === null ? null : JSON.stringify(c.tag_ids),
        metadata: c.metadata === null ? null : JSON.stringify(c.metadata),
      })),
    )
    .execute();

export const listCommits = (db: Database, requestIds: readonly string[]) =>
  requestIds.length === 0
    ? Promise.resolve([])
    : db
        .selectFrom("secret_approval_request_commits")
        .selectAll()
        .where("request_id", "in", [...requestIds])
        .orderBy("request_id")
        .orderBy("position")
        .execute();
export type CommitRow = Awaited<ReturnType<typeof listCommits>>[number];

export const listReviews = (db: Database, requestIds: readonly string[]) =>
  requestIds.length === 0
    ? Promise.resolve([])
    : db
        .selectFrom("secret_approval_reviews")
        .selectAll()
        .where("request_id", "in", [...requestIds])
        .orderBy("created_at")
        .execute();
export type ReviewRow = Awaited<ReturnType<typeof listReviews>>[number];

export const upsertReview = (
  trx: Tx,
  values: { request_id: string; reviewer_type: string; reviewer_id: string; status: string; comment: string | null },
) =>
  trx
    .insertInto("secret_approval_reviews")
    .values(values)
    .onConflict((oc) =>
      oc
        .columns(["request_id", "reviewer_type", "reviewer_id"])
        .doUpdateSet({ status: values.status, comment: values.comment, updated_at: sql`now()` }),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
