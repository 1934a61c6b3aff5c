import { sql } from "kysely";
import type { Database } from "../../db/database";
import type { DynamicSecretMetadataEntry } from "../../db/tables/dynamic-secrets";

/** Everything but the encrypted root credentials. */
export const DYNAMIC_SECRET_COLUMNS = [
  "id",
  "folder_id",
  "name",
  "type",
  "entity_prefix",
  "default_ttl",
  "max_ttl",
  "username_template",
  "metadata",
  "status",
  "status_details",
  "version",
  "created_at",
  "updated_at",
] as const;

export const findDynamicSecretByName = (db: Database, folderId: string, name: string) =>
  db
    .selectFrom("dynamic_secrets")
    .select(DYNAMIC_SECRET_COLUMNS)
    .where("folder_id", "=", folderId)
    .where("name", "=", name)
    .executeTakeFirst();

export const findDynamicSecretById = (db: Database, id: string) =>
  db.selectFrom("dynamic_secrets").select(DYNAMIC_SECRET_COLUMNS).where("id", "=", id).executeTakeFirst();

export type DynamicSecretRow = NonNullable<Awaited<ReturnType<typeof findDynamicSecretById>>>;

/** The encrypted inputs, only for callers that decrypt them to talk to the provider. */
export const findEncryptedInputs = async (db: Database, id: string) =>
  (await db.selectFrom("dynamic_secrets").select("encrypted_inputs").where("id", "=", id).executeTakeFirst())
    ?.encrypted_inputs;

/** Type and encrypted inputs in one read, for the revocation job. */
export const findProviderConfig = (db: Database, id: string) =>
  db
    .selectFrom("dynamic_secrets")
    .select(["type", "encrypted_inputs", "folder_id"])
    .where("id", "=", id)
    .executeTakeFirst();

export const listDynamicSecretsInFolder = (db: Database, folderId: string) =>
  db
    .selectFrom("dynamic_secrets")
    .select(DYNAMIC_SECRET_COLUMNS)
    .where("folder_id", "=", folderId)
    .orderBy("name")
    .execute();

export const insertDynamicSecret = (
  db: Database,
  values: {
    id: string;
    folder_id: string;
    name: string;
    type: string;
    entity_prefix: string;
    encrypted_inputs: string;
    default_ttl: string;
    max_ttl: string | null;
    username_template: string | null;
    metadata: DynamicSecretMetadataEntry[];
  },
) =>
  db
    .insertInto("dynamic_secrets")
    .values({ ...values, metadata: JSON.stringify(values.metadata) })
    .returning(DYNAMIC_SECRET_COLUMNS)
    .executeTakeFirstOrThrow();

export const updateDynamicSecret = (
  db: Database,
  id: string,
  values: Partial<{
    name: string;
    encrypted_inputs: string;
    default_ttl: string;
    max_ttl: string | null;
    username_template: string | null;
    metadata: DynamicSecretMetadataEntry[];
    status: string | null;
    status_details: string | null;
  }>,
) =>
  db
    .updateTable("dynamic_secrets")
    .set({
      ...values,
      metadata: values.metadata === undefined ? undefined : JSON.stringify(values.metadata),
      updated_at: sql<Date>`now()`,
    })
    .where("id", "=", id)
    .returning(DYNAMIC_SECRET_COLUMNS)
    .executeTakeFirst();

/**
 * Out of its folder at once (the name is free again), kept only until the revocation job has taken
 * back its leases; then deleteDrainedDynamicSecrets removes it.
 */
export const detachDynamicSecret = (db: Database, id: string) =>
  db
    .updateTable("dynamic_secrets")
    .set({ folder_id: null, status: DELETING_STATUS, updated_at: sql<Date>`now()` })
    .where("id", "=", id)
    .returning(DYNAMIC_SECRET_COLUMNS)
    .executeTakeFirst();

/**
 * Deletes the secret only while it has no lease, in one statement: a count followed by a delete
 * would let a lease committed in between be cascaded away while its credential lives on.
 */
export const deleteDynamicSecretWithoutLeases = (db: Database, id: string) =>
  db
    .deleteFrom("dynamic_secrets")
    .where("id", "=", id)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom("dynamic_secret_leases as l")
            .select("l.id")
            .whereRef("l.dynamic_secret_id", "=", "dynamic_secrets.id"),
        ),
      ),
    )
    .returning(DYNAMIC_SECRET_COLUMNS)
    .executeTakeFirst();

/**
 * Secrets being deleted, or detached because their folder went away, are removed once their
 * last lease is revoked.
 */
export const deleteDrainedDynamicSecrets = (db: Database) =>
  db
    .deleteFrom("dynamic_secrets")
    .where((eb) => eb.or([eb("folder_id", "is", null), eb("status", "=", DELETING_STATUS)]))
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom("dynamic_secret_leases as l")
            .select("l.id")
            .whereRef("l.dynamic_secret_id", "=", "dynamic_secrets.id"),
        ),
      ),
    )
    .execute();

/** Every secret whose credentials live on a target the orphan sweeper can list. */
export const listSweepableDynamicSecrets = (db: Database, types: string[]) =>
  db.selectFrom("dynamic_secrets").select(["id", "type", "entity_prefix"]).where("type", "in", types).execute();

/**
 * Claims this secret's orphan sweep unless an instance (this one or another) claimed it less than
 * `periodMs` ago: true when the caller is to sweep it.
 */
export const claimOrphanSweep = async (db: Database, id: string, periodMs: number) =>
  (await db
    .updateTable("dynamic_secrets")
    .set({ orphans_swept_at: sql<Date>`now()` })
    .where("id", "=", id)
    .where((eb) =>
      eb.or([
        eb("orphans_swept_at", "is", null),
        eb("orphans_swept_at", "<=", sql<Date>`now() - make_interval(secs => ${periodMs / 1000}::float8)`),
      ]),
    )
    .returning("id")
    .executeTakeFirst()) !== undefined;

export const DELETING_STATUS = "Deleting";

/**
 * A revocation on this secret's target failed: no revocation of it is tried for a while, doubling
 * from `baseSeconds` with each failure in a row up to `maxSeconds`, on every instance.
 */
export const pauseRevocations = (db: Database, id: string, baseSeconds: number, maxSeconds: number) =>
  db
    .updateTable("dynamic_secrets")
    .set({
      revocation_failures: sql<number>`revocation_failures + 1`,
      revocation_paused_until: sql<Date>`now() + make_interval(secs => least(${maxSeconds}::float8, ${baseSeconds}::float8 * power(2, least(revocation_failures, 30))))`,
    })
    .where("id", "=", id)
    .returning(["revocation_failures", "revocation_paused_until"])
    .executeTakeFirst();

/** A revocation on the target worked again: the backoff starts over. */
export const resumeRevocations = (db: Database, id: string) =>
  db
    .updateTable("dynamic_secrets")
    .set({ revocation_failures: 0, revocation_paused_until: null })
    .where("id", "=", id)
    .where("revocation_failures", ">", 0)
    .execute();
