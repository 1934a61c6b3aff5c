import { sql } from "kysely";
import type { Tx } from "../../db/transaction";
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
 * head: one statement. The events travel as one JSON document (a batch holds up to thousands of
 * events: one parameter instead of eighteen per event), an array of `[content, prev_hash, hash]`
 * where `content` is the very array the hash covers, read back by position.
 */
export const appendToChain = async (trx: Tx, chainId: string, events: string, head: { seq: string; hash: string }) => {
  await sql`with ev as (
      select e->0 as c, e->>1 as prev_hash, e->>2 as hash from jsonb_array_elements(${events}::jsonb) e),
    ins as (
      insert into audit_logs (id, org_id, project_id, project_name, chain_id, seq, actor_type, actor_id,
        actor_metadata, event_type, event_metadata, ip_address, user_agent, user_agent_type, created_at,
        expires_at, prev_hash, hash)
      select (c->>0)::uuid, (c->>1)::uuid, (c->>2)::uuid, c->>3, (c->>4)::uuid, (c->>5)::bigint, c->>6, c->>7,
        c->8, c->>9, c->10, c->>11, c->>12, c->>13, (c->>14)::timestamptz,
        (c->>15)::timestamptz, prev_hash, hash
      from ev
      returning id, org_id, seq),
    queued as (
      insert into audit_log_outbox (stream_id, event_id)
      select s.id, ins.id from ins join audit_log_streams s on s.org_id = ins.org_id order by ins.seq)
    update audit_log_chains set seq = ${head.seq}, hash = ${head.hash} where chain_id = ${chainId}`.execute(trx);
};
