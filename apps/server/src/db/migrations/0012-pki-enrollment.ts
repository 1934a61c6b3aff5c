import type { Kysely } from "kysely";
import { ID, TIMESTAMPS, runStatements } from "./run-sql";

/**
 * Renewal links and status on certificates, CA certificate generations (renewal keeps the old one for
 * verification; deleting an intermediate detaches its certificates from it, revoked, so they stay in the
 * parent's CRL until the parent goes too), and the ACME
 * state: nonces (in the database so every instance accepts every other's), accounts, orders,
 * authorizations and challenges.
 */
export const up = (db: Kysely<unknown>) =>
  runStatements(db, [
    `alter table pki_certificates
      add column renewed_from_id uuid references pki_certificates(id) on delete set null,
      add column renewed_by_id uuid references pki_certificates(id) on delete set null,
      add column renewal_status text, add column renewal_error text,
      add column renewal_attempts int not null default 0, add column renewal_next_attempt_at timestamptz`,
    `create index pki_certificates_renewed_from_id_idx on pki_certificates (renewed_from_id)`,
    `create index pki_certificates_renewed_by_id_idx on pki_certificates (renewed_by_id)`,
    `create index pki_certificates_renewal_due_idx on pki_certificates (not_after)
      where status = 'active' and renewed_by_id is null`,
    `create index pki_certificates_ca_id_idx on pki_certificates (ca_id)`,
    `create table pki_ca_certificates (${ID},
      ca_id uuid references pki_certificate_authorities(id) on delete cascade,
      issuer_ca_id uuid references pki_certificate_authorities(id) on delete cascade,
      serial_number text not null, certificate_pem text not null, certificate_chain_pem text not null,
      not_before timestamptz not null, not_after timestamptz not null,
      revoked_at timestamptz, revocation_reason text,
      ${TIMESTAMPS})`,
    `create index pki_ca_certificates_ca_id_idx on pki_ca_certificates (ca_id, created_at)`,
    `create index pki_ca_certificates_issuer_ca_id_idx on pki_ca_certificates (issuer_ca_id)`,
    `insert into pki_ca_certificates (ca_id, issuer_ca_id, serial_number, certificate_pem, certificate_chain_pem,
      not_before, not_after, created_at)
      select id, parent_ca_id, serial_number, certificate_pem, certificate_chain_pem, not_before, not_after, created_at
      from pki_certificate_authorities`,
    `create table pki_acme_nonces (nonce text primary key, expires_at timestamptz not null)`,
    `create index pki_acme_nonces_expires_at_idx on pki_acme_nonces (expires_at)`,
    `create table pki_acme_accounts (${ID},
      profile_id uuid not null references pki_certificate_profiles(id) on delete cascade,
      thumbprint text not null, jwk jsonb not null, status text not null default 'valid',
      contact jsonb not null default '[]'::jsonb, eab_kid text,
      ${TIMESTAMPS}, unique (profile_id, thumbprint))`,
    `create table pki_acme_orders (${ID},
      account_id uuid not null references pki_acme_accounts(id) on delete cascade,
      status text not null, identifiers jsonb not null, expires_at timestamptz not null,
      error jsonb, certificate_id uuid references pki_certificates(id) on delete set null,
      ${TIMESTAMPS})`,
    `create index pki_acme_orders_account_id_idx on pki_acme_orders (account_id, created_at)`,
    `create index pki_acme_orders_certificate_id_idx on pki_acme_orders (certificate_id)`,
    `create table pki_acme_authorizations (${ID},
      order_id uuid not null references pki_acme_orders(id) on delete cascade,
      identifier_type text not null, identifier_value text not null, wildcard boolean not null default false,
      status text not null, expires_at timestamptz not null,
      ${TIMESTAMPS})`,
    `create index pki_acme_authorizations_order_id_idx on pki_acme_authorizations (order_id)`,
    `create table pki_acme_challenges (${ID},
      authorization_id uuid not null references pki_acme_authorizations(id) on delete cascade,
      type text not null, token text not null, status text not null,
      validated_at timestamptz, error jsonb,
      ${TIMESTAMPS})`,
    `create index pki_acme_challenges_authorization_id_idx on pki_acme_challenges (authorization_id)`,
  ]);

export const down = (db: Kysely<unknown>) =>
  runStatements(db, [
    `drop table if exists pki_acme_challenges`,
    `drop table if exists pki_acme_authorizations`,
    `drop table if exists pki_acme_orders`,
    `drop table if exists pki_acme_accounts`,
    `drop table if exists pki_acme_nonces`,
    `drop table if exists pki_ca_certificates`,
    `alter table pki_certificates drop column renewed_from_id, drop column renewed_by_id,
      drop column renewal_status, drop column renewal_error, drop column renewal_attempts,
      drop column renewal_next_attempt_at`,
  ]);
