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
 * head: one statement. The rows travel as one JSON document (a batch holds up to thousands of
 * events: one parameter instead of eighteen per event), expanded by the database.
 */
export const appendToChain = async (
  trx: Tx,
  chainId: string,
  rows: AuditLogsTable[],
  head: { seq: string; hash: string },
) => {
  // The writer builds every row with exactly the table's columns.
  const columns = sql.join(Object.keys(rows[0]!).map((column) => sql.ref(column)));
  await sql`with ins as (
      insert into audit_logs (${columns})
      select ${columns} from jsonb_populate_recordset(null::audit_logs, ${JSON.stringify(rows)}::jsonb)
      returning id, org_id, seq),
    queued as (
      insert into audit_log_outbox (stream_id, event_id)
      select s.id, ins.id from ins join audit_log_streams s on s.org_id = ins.org_id order by ins.seq)
    update audit_log_chains set seq = ${head.seq}, hash = ${head.hash} where chain_id = ${chainId}`.execute(trx);
};
