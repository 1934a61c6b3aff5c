import type { Database } from "../../db/database";
import type { Tx } from "../../db/transaction";
import type { OidcConfigsTable } from "../../db/tables/people";
import type { Insertable, Updateable } from "kysely";

export const findOidcConfigOfOrg = (db: Database | Tx, orgId: string) =>
  db.selectFrom("oidc_configs").selectAll().where("org_id", "=", orgId).executeTakeFirst();

export type OidcConfigRow = NonNullable<Awaited<ReturnType<typeof findOidcConfigOfOrg>>>;

export const insertOidcConfig = (trx: Tx, values: Insertable<OidcConfigsTable>) =>
  trx.insertInto("oidc_configs").values(values).returning("id").executeTakeFirstOrThrow();

export const updateOidcConfigRow = (trx: Tx, id: string, values: Updateable<OidcConfigsTable>) =>
  trx
    .updateTable("oidc_configs")
    .set({ ...values, updated_at: new Date() })
    .where("id", "=", id)
    .execute();
