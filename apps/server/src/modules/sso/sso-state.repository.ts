import type { Database } from "../../db/database";
import type { Tx } from "../../db/transaction";

export const insertLoginState = (
  db: Database,
  values: {
    state_hash: Buffer;
    nonce_hash: Buffer;
    binding_hash: Buffer;
    org_id: string;
    encrypted_code_verifier: string;
    callback_port: number | null;
    callback_state: string | null;
    expires_at: Date;
  },
) => db.insertInto("sso_login_states").values(values).returning("id").executeTakeFirstOrThrow();

/** The PKCE verifier, sealed under the new state's id (so it is known only once the row exists). */
export const setLoginStateVerifier = (db: Database, id: string, encryptedCodeVerifier: string) =>
  db
    .updateTable("sso_login_states")
    .set({ encrypted_code_verifier: encryptedCodeVerifier })
    .where("id", "=", id)
    .execute();

/**
 * Spend a sign-in state: at most once, before it expires. Answers the row only to the one caller
 * that spent it, so a replayed callback finds nothing.
 */
export const spendLoginState = (trx: Tx, stateHash: Buffer, now: Date) =>
  trx
    .updateTable("sso_login_states")
    .set({ used_at: now })
    .where("state_hash", "=", stateHash)
    .where("used_at", "is", null)
    .where("expires_at", ">", now)
    .returning([
      "id",
      "org_id",
      "nonce_hash",
      "binding_hash",
      "encrypted_code_verifier",
      "callback_port",
      "callback_state",
    ])
    .executeTakeFirst();

/** Sign-ins never finished, and spent ones, are kept a day for inspection and then removed. */
export const deleteOldLoginStates = (db: Database, before: Date) =>
  db.deleteFrom("sso_login_states").where("expires_at", "<", before).execute();
