import type { Kysely } from "kysely";
import { ID, TIMESTAMPS, runStatements } from "./run-sql";

export const up = (db: Kysely<unknown>) =>
  runStatements(db, [
    `create table gateways (${ID},
      org_id uuid not null references organizations(id) on delete cascade,
      name text not null,
      auth_method text not null check (auth_method in ('token', 'aws', 'identity')),
      identity_id uuid references identities(id) on delete cascade,
      relay_id uuid, direct_address text,
      token_version int not null default 0,
      heartbeat timestamptz, heartbeat_ttl int, direct_heartbeat timestamptz, ${TIMESTAMPS},
      constraint gateways_org_name_key unique (org_id, name),
      constraint gateways_identity_id_key unique (identity_id),
      constraint gateways_identity_method_check check ((auth_method = 'identity') = (identity_id is not null)))`,
    `create table gateway_aws_auth_configs (${ID},
      gateway_id uuid not null unique references gateways(id) on delete cascade,
      sts_endpoint text not null, allowed_principal_arns text not null, allowed_account_ids text not null, ${TIMESTAMPS})`,
    `create table gateway_enrollment_tokens (${ID},
      gateway_id uuid not null references gateways(id) on delete cascade,
      token_hash bytea not null unique,
      expires_at timestamptz not null, used_at timestamptz,
      created_at timestamptz not null default now())`,
    `create index gateway_enrollment_tokens_gateway_id_idx on gateway_enrollment_tokens (gateway_id)`,
    `create table gateway_access_tokens (${ID},
      gateway_id uuid not null references gateways(id) on delete cascade,
      token_hash bytea not null unique,
      token_version int not null,
      created_at timestamptz not null default now())`,
    `create index gateway_access_tokens_gateway_id_idx on gateway_access_tokens (gateway_id)`,
  ]);

export const down = (db: Kysely<unknown>) =>
  runStatements(db, [
    "drop table gateway_access_tokens",
    "drop table gateway_enrollment_tokens",
    "drop table gateway_aws_auth_configs",
    "drop table gateways",
  ]);
