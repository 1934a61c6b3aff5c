import type { Kysely } from "kysely";
import { runStatements } from "./run-sql";

/**
 * A secret's value and comment sealed in one ciphertext (`encrypted_fields`): every read that needs
 * one needs the other, and a list opens one ciphertext per secret instead of two. Rows written
 * before keep their two ciphertexts (read as they are, re-sealed in the new form on their next
 * write); a row is in exactly one of the two forms.
 */
const ONE_FORM = `check (
  (encrypted_fields is not null and encrypted_value is null and encrypted_comment is null)
  or (encrypted_fields is null and encrypted_value is not null and encrypted_comment is not null))`;

export const up = (db: Kysely<unknown>) =>
  runStatements(
    db,
    ["secrets", "secret_versions"].flatMap((table) => [
      `alter table ${table} add column encrypted_fields text`,
      `alter table ${table} alter column encrypted_value drop not null`,
      `alter table ${table} alter column encrypted_comment drop not null`,
      `alter table ${table} add constraint ${table}_one_sealed_form ${ONE_FORM}`,
    ]),
  );

/** Fails while any row is in the new form: turning it back needs the project keys, not SQL. */
export const down = (db: Kysely<unknown>) =>
  runStatements(
    db,
    ["secrets", "secret_versions"].flatMap((table) => [
      `alter table ${table} drop constraint ${table}_one_sealed_form`,
      `alter table ${table} alter column encrypted_value set not null`,
      `alter table ${table} alter column encrypted_comment set not null`,
      `alter table ${table} drop column encrypted_fields`,
    ]),
  );
