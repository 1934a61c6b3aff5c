import { CompiledQuery, type Compilable } from "kysely";
import { keepGenericPlan, type Database } from "./database";

const PREFIX = "\u0000keyward-parameter-";
const placeholder = (index: number) => `${PREFIX}${index}`;

/**
 * A hot query built and compiled by Kysely once per database, then run with fresh parameters.
 * Building a query tree on every request costs more than the database round trip it describes; the
 * SQL text stays identical, so PostgreSQL also keeps its plan (`keepGenericPlan`). `build` receives placeholder
 * strings in place of the parameters (whatever their declared type, e.g. an array bound as one
 * PostgreSQL array) and must use each of them only as a bound value.
 */
export const compiledOnce = <R, A extends unknown[]>(build: (db: Database, ...params: A) => Compilable<R>) => {
  const cache = new WeakMap<Database, CompiledQuery<R>>();
  return async (db: Database, ...values: A): Promise<R[]> => {
    let compiled = cache.get(db);
    if (!compiled) {
      compiled = build(db, ...(values.map((_, i) => placeholder(i)) as A)).compile();
      keepGenericPlan(compiled.sql);
      cache.set(db, compiled);
    }
    const parameters = compiled.parameters.map((p) =>
      typeof p === "string" && p.startsWith(PREFIX) ? values[Number(p.slice(PREFIX.length))] : p,
    );
    const result = await db.executeQuery<R>(CompiledQuery.raw(compiled.sql, parameters));
    return result.rows;
  };
};
