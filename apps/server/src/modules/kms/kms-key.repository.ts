import { CompiledQuery, type Insertable } from "kysely";
import { batchedLookup } from "../../db/batched-lookup";
import { keepGenericPlan, type Database } from "../../db/database";
import type { KmsKeyVersionsTable, KmsKeysTable } from "../../db/tables/kms";

/** A key with what permission checks need of its project; never its material. */
const keyQuery = (db: Database) =>
  db
    .selectFrom("kms_keys as k")
    .innerJoin("projects as p", "p.id", "k.project_id")
    .select([
      "k.id",
      "k.project_id",
      "k.name",
      "k.description",
      "k.key_usage",
      "k.encryption_algorithm",
      "k.is_disabled",
      "k.version",
      "k.created_at",
      "k.updated_at",
      "p.org_id",
      "p.type as project_type",
      "p.permission_version",
    ]);

export const findKeyById = (db: Database, keyId: string) => keyQuery(db).where("k.id", "=", keyId).executeTakeFirst();

export type KmsKeyRow = NonNullable<Awaited<ReturnType<typeof findKeyById>>>;

export const findKeyByName = (db: Database, projectId: string, name: string) =>
  keyQuery(db).where("k.project_id", "=", projectId).where("k.name", "=", name).executeTakeFirst();

export type KmsKeyWithMaterial = KmsKeyRow & {
  version_id: string | null;
  encrypted_material: string | null;
  public_key: string | null;
};

/**
 * The key, its project, and the sealed material of one version (the current one when the version
 * is null; absent when no such version exists) for many lookups in one statement of fixed text.
 */
const KEYS_WITH_MATERIAL =
  keepGenericPlan(`select q.n, k.id, k.project_id, k.name, k.description, k.key_usage, k.encryption_algorithm, k.is_disabled,
      k.version, k.created_at, k.updated_at, p.org_id, p.type as project_type, p.permission_version,
      v.id as version_id, v.encrypted_material, v.public_key
    from unnest($1::uuid[], $2::int[]) with ordinality as q(key_id, version, n)
    join kms_keys k on k.id = q.key_id
    join projects p on p.id = k.project_id
    left join kms_key_versions v on v.key_id = k.id and v.version = coalesce(q.version, k.version)`);

const keysWithMaterial = (db: Database, lookups: readonly string[]) => {
  const parsed = lookups.map((l) => l.split(":"));
  return db
    .executeQuery<KmsKeyWithMaterial & { n: string | number; lookup: string }>(
      CompiledQuery.raw(KEYS_WITH_MATERIAL, [parsed.map((p) => p[0]), parsed.map((p) => (p[1] ? Number(p[1]) : null))]),
    )
    .then(({ rows }) => {
      // Each row names its lookup by its position in the batch; tagged in place, not copied.
      for (const row of rows) row.lookup = lookups[Number(row.n) - 1]!;
      return rows;
    });
};
const batchedKeyWithMaterial = batchedLookup(keysWithMaterial, (row) => row.lookup);

/**
 * One round trip for a crypto operation, shared with the other encrypt, decrypt, sign and verify
 * requests of the same event-loop turn. `keyId` must be a UUID and `version` a PostgreSQL int.
 */
export const findKeyWithMaterial = async (
  db: Database,
  keyId: string,
  version?: number,
): Promise<KmsKeyWithMaterial | undefined> => {
  const row = await batchedKeyWithMaterial(db, `${keyId}:${version ?? ""}`);
  if (!row) return undefined;
  return row;
};

export const listKeys = (
  db: Database,
  projectId: string,
  page: { offset: number; limit: number; direction: "asc" | "desc"; search?: string },
) =>
  keyQuery(db)
    .where("k.project_id", "=", projectId)
    .$if(!!page.search, (qb) => qb.where("k.name", "ilike", `%${escapeLike(page.search!)}%`))
    .orderBy("k.name", page.direction)
    .offset(page.offset)
    .limit(page.limit)
    .execute();

export const countKeys = async (db: Database, projectId: string, search?: string) => {
  const row = await db
    .selectFrom("kms_keys")
    .select((eb) => eb.fn.countAll<string | number>().as("count"))
    .where("project_id", "=", projectId)
    .$if(!!search, (qb) => qb.where("name", "ilike", `%${escapeLike(search!)}%`))
    .executeTakeFirstOrThrow();
  return Number(row.count);
};

const escapeLike = (value: string) => value.replace(/[\\%_]/g, (c) => `\\${c}`);

export const insertKey = (db: Database, values: Insertable<KmsKeysTable>) =>
  db.insertInto("kms_keys").values(values).returning("id").executeTakeFirstOrThrow();

export const insertKeyVersion = (db: Database, values: Insertable<KmsKeyVersionsTable>) =>
  db.insertInto("kms_key_versions").values(values).execute();

export const updateKey = (
  db: Database,
  keyId: string,
  values: { name?: string; description?: string; is_disabled?: boolean },
) =>
  db
    .updateTable("kms_keys")
    .set({ ...values, updated_at: new Date() })
    .where("id", "=", keyId)
    .returning("id")
    .executeTakeFirst();

/** Takes the row lock, so concurrent rotations get distinct versions. */
export const bumpKeyVersion = (db: Database, keyId: string) =>
  db
    .updateTable("kms_keys")
    .set((eb) => ({ version: eb("version", "+", 1), updated_at: new Date() }))
    .where("id", "=", keyId)
    .returning("version")
    .executeTakeFirst();

export const deleteKey = (db: Database, keyId: string) =>
  db.deleteFrom("kms_keys").where("id", "=", keyId).returning("id").executeTakeFirst();
