import type { Generated } from "kysely";
import type { CreatedAt, Timestamp } from "./foundation";

export interface AuditLogChainsTable {
  chain_id: string;
  org_id: string | null;
  /** The last event's sequence number and hash: what the next event links to. */
  seq: string;
  hash: string;
  /** Retention removes a prefix of the chain; the last removed event is kept as the anchor. */
  pruned_seq: Generated<string>;
  pruned_hash: string;
}

export interface AuditLogsTable {
  id: string;
  org_id: string | null;
  project_id: string | null;
  project_name: string | null;
  chain_id: string;
  seq: string;
  actor_type: string;
  actor_id: string | null;
  actor_metadata: unknown;
  event_type: string;
  event_metadata: unknown;
  ip_address: string | null;
  user_agent: string | null;
  user_agent_type: string | null;
  created_at: Date;
  expires_at: Date | null;
  prev_hash: string;
  hash: string;
}

export interface AuditLogStreamsTable {
  id: Generated<string>;
  org_id: string;
  provider: string;
  url: string;
  header_names: Generated<unknown>;
  /** Header values (API keys) sealed with the root key. */
  encrypted_headers: string;
  encrypted_signing_secret: string;
  /** A deliverer's claim: another process takes the stream over when it lapses. */
  claimed_until: Date | null;
  next_attempt_at: Generated<Date>;
  attempts: Generated<number>;
  last_error: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface AuditLogOutboxTable {
  id: Generated<string>;
  stream_id: string;
  event_id: string;
  created_at: CreatedAt;
}

export interface AuditTables {
  audit_log_chains: AuditLogChainsTable;
  audit_logs: AuditLogsTable;
  audit_log_streams: AuditLogStreamsTable;
  audit_log_outbox: AuditLogOutboxTable;
}
