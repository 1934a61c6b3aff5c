import type { Insertable } from "kysely";
import type { Database } from "../../db/database";
import type { SsoEmailLinksTable } from "../../db/tables/people";
import type { Tx } from "../../db/transaction";

export const insertEmailLink = (
  trx: Tx,
  values: Omit<Insertable<SsoEmailLinksTable>, "id" | "attempts" | "used_at" | "created_at">,
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
