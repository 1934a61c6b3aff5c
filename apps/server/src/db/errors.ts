/** PostgreSQL error classification, so services can turn constraint violations into 4xx answers. */
type PgError = { code?: string; constraint?: string };

export const isUniqueViolation = (error: unknown, constraint?: string) => {
  const e = error as PgError;
  return e?.code === "23505" && (constraint === undefined || e.constraint === constraint);
};

/**
 * deadlock_detected or serialization_failure: PostgreSQL rolled the whole transaction back to let
 * another finish, and running it again may well succeed.
 */
export const isTransientConflict = (error: unknown) => {
  const code = (error as PgError)?.code;
  return code === "40P01" || code === "40001";
};

export const isForeignKeyViolation = (error: unknown) => (error as PgError)?.code === "23503";

/** A delete refused by an `on delete restrict` foreign key (a row still in use). */
export const isRestrictViolation = (error: unknown) =>
  (error as PgError)?.code === "23001" || (error as PgError)?.code === "23503";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Ids are UUIDs in storage; anything else cannot exist, so callers answer 404 without a query. */
export const isUuid = (value: string) => UUID.test(value);
