import { sql } from "kysely";
import type { Tx } from "../../db/transaction";
import type { AuditLogsTable } from "../../db/tables/audit";
import { GENESIS_HASH } from "./audit-chain";

export type ChainHead = {
  seq: string;
  hash: string;
  projectName: string | null;
  projectRetentionDays: number | null;
};

/**
 * The head of a chain, created on first use and locked until the transaction ends: appends to one
 * chain are serialised, so two writers can never link to the same predecessor. The project's name
 * and retention come along in the same round trip.
 */
export const lockChainHead = async (
  trx: Tx,
  chainId: string,
  orgId: string | null,
  projectId: string | null,
): Promise<ChainHead> => {
  const { rows } = await sql<{
    seq: string;
    hash: string;
    project_name: string | null;
    retention: number | null;
  }>`insert into audit_log_chains (chain_id, org_id, seq, hash, pruned_seq, pruned_hash)
     values (${chainId}, ${orgId}, 0, ${GENESIS_HASH}, 0, ${GENESIS_HASH})
     on conflict (chain_id) do update set seq = audit_log_chains.seq
     returning seq::text as seq, hash,
       (select name from projects where id = ${projectId}) as project_name,
       (select audit_logs_retention_days from projects where id = ${projectId}) as retention`.execute(trx);
  const row = rows[0]!;
  return { seq: row.seq, hash: row.hash, projectName: row.project_name, projectRetentionDays: row.retention };
};

/**
 * Append events to a locked chain, queue them for every stream of their organization, and move the
 * head: one statement.
 */
export const appendToChain = async (
  trx: Tx,
  chainId: string,
  rows: AuditLogsTable[],
  head: { seq: string; hash: string },
) => {
  const values = rows.map((row) => ({
    ...row,
    actor_metadata: JSON.stringify(row.actor_metadata),
    event_metadata: JSON.stringify(row.event_metadata),
  }));
  await trx
    .with("ins", (db) => db.insertInto("audit_logs").values(values).returning(["id", "org_id"]))
    .with("queued", (db) =>
      db
        .insertInto("audit_log_outbox")
        .columns(["stream_id", "event_id"])
        .expression((eb) =>
          eb
            .selectFrom("ins")
            .innerJoin("audit_log_streams as s", "s.org_id", "ins.org_id")
            .select(["s.id as stream_id", "ins.id as event_id"]),
        ),
    )
    .updateTable("audit_log_chains")
    .set({ seq: head.seq, hash: head.hash })
    .where("chain_id", "=", chainId)
    .execute();
};
