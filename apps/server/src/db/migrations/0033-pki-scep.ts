import type { Kysely } from "kysely";
import { runStatements } from "./run-sql";

/**
 * SCEP enrollment. A SCEP profile has one or more RA certificates (issued by its CA, the newest
 * one current, older ones kept until they expire so a client that fetched one can still encrypt to
 * it); the RA private key is sealed under the root key, bound to the row id. Dynamic challenges are
 * stored as SHA-256 hashes and spent by deleting their row.
 */
export const up = (db: Kysely<unknown>) =>
  runStatements(db, [
    `create table pki_scep_ras (
      id uuid primary key,
      profile_id uuid not null references pki_certificate_profiles(id) on delete cascade,
      serial_number text not null,
      certificate_pem text not null,
      encrypted_private_key text not null,
      not_after timestamptz not null,
      created_at timestamptz not null default now())`,
    `create index pki_scep_ras_profile_idx on pki_scep_ras (profile_id, created_at desc)`,
    `create table pki_scep_challenges (
      challenge_hash bytea primary key,
      profile_id uuid not null references pki_certificate_profiles(id) on delete cascade,
      expires_at timestamptz not null,
      created_at timestamptz not null default now())`,
    `create index pki_scep_challenges_profile_idx on pki_scep_challenges (profile_id, expires_at)`,
  ]);

export const down = (db: Kysely<unknown>) =>
  runStatements(db, [`drop table pki_scep_challenges`, `drop table pki_scep_ras`]);
