import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { SEALED_TABLES } from "../../src/modules/root-keys/sealed-columns";
import { getTestApp } from "../helpers/app";

/** Sealed columns that hold values under a data key (or a seal), not under the root key: a root rotation never opens them. */
const NOT_ROOT_SEALED = new Set([
  "root_keys.sealed",
  "secrets.encrypted_fields",
  "secrets.encrypted_value",
  "secrets.encrypted_comment",
  "secret_versions.encrypted_fields",
  "secret_versions.encrypted_value",
  "secret_versions.encrypted_comment",
  "secret_approval_request_commits.encrypted_value",
  "secret_approval_request_commits.encrypted_comment",
  "kms_key_versions.encrypted_material",
  "secret_rotations.encrypted_credentials",
  "secret_rotations.encrypted_intent",
]);

const registered = SEALED_TABLES.flatMap((entry) => entry.columns.map((column) => `${entry.table}.${column.name}`));

describe("the registry of root-sealed columns", () => {
  it("lists every sealed column of the schema that is not under a data key", async () => {
    const { deps } = await getTestApp();
    const { rows } = await sql<{ name: string }>`select table_name || '.' || column_name as name
      from information_schema.columns
      where table_schema = 'public' and data_type = 'text'
        and (column_name like 'encrypted\\_%' or column_name like 'wrapped\\_%' or column_name = 'sealed')`.execute(
      deps.db,
    );
    const sealed = rows.map((row) => row.name).filter((name) => !NOT_ROOT_SEALED.has(name));
    expect(sealed.sort()).toEqual([...registered].sort());
  });

  it("matches the guards the database puts on those columns", async () => {
    const { deps } = await getTestApp();
    const { rows } = await sql<{ table: string; args: string }>`select c.relname as table,
        encode(t.tgargs, 'escape') as args
      from pg_trigger t join pg_class c on c.oid = t.tgrelid
      where t.tgname like '%\\_root\\_sealed\\_guard'`.execute(deps.db);
    const guarded = rows.flatMap((row) =>
      row.args
        .split("\\000")
        .filter(Boolean)
        .map((column) => `${row.table}.${column}`),
    );
    expect(guarded.sort()).toEqual([...registered].sort());
  });
});
