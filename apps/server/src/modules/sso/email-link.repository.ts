import type { Database } from "../../db/database";
import type { Tx } from "../../db/transaction";

export const insertEmailLink = (
  trx: Tx,
  values: {
    org_id: string;
    user_id: string;
    alias_type: string;
    external_id: string;
    email: string;
    first_name: string;
    last_name: string;
    groups: string | null;
    binding_hash: Buffer;
    code_hash: Buffer;
    callback_port: number | null;
    callback_state: string | null;
    expires_at: Date;
  },
) => trx.insertInto("sso_email_links").values(values).returning("id").executeTakeFirstOrThrow();

/** The pending link of this browser, locked: two answers with codes are decided one after the other. */
export const lockEmailLink = (trx: Tx, bindingHash: Buffer) =>
  trx.selectFrom("sso_email_links").selectAll().where("binding_hash", "=", bindingHash).forUpdate().executeTakeFirst();

export const countWrongCode = (trx: Tx, id: string, spend: boolean, now: Date) =>
  trx
    .updateTable("sso_email_links")
    .set((eb) => ({ attempts: eb("attempts", "+", 1), ...(spend ? { used_at: now } : {}) }))
    .where("id", "=", id)
    .execute();

export const spendEmailLink = (trx: Tx, id: string, now: Date) =>
  trx.updateTable("sso_email_links").set({ used_at: now }).where("id", "=", id).execute();

/** Links never finished, and spent ones, are kept a day and then removed. */
export const deleteOldEmailLinks = (db: Database | Tx, before: Date) =>
  db.deleteFrom("sso_email_links").where("expires_at", "<", before).execute();
