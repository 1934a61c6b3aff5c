import type { Kysely } from "kysely";
import { runStatements } from "./run-sql";

/**
 * Stored custom rotation statements are dropped. One used to be accepted from anyone who could use
 * the connection and was run as the connection's user, split at every `;` into as many statements;
 * a stored one cannot be told apart from one the connection's editor chose. Those rotations now set
 * their users' passwords with the statement the server builds; someone who may edit the connection
 * sets a custom statement again by creating the rotation anew.
 */
export const up = (db: Kysely<unknown>) =>
  runStatements(db, [
    `update secret_rotations set parameters = parameters - 'rotationStatement', updated_at = now()
      where parameters ? 'rotationStatement'`,
  ]);

/** Nothing to restore: the dropped statements are gone. */
export const down = async (_db: Kysely<unknown>) => undefined;
