import { sql } from "kysely";
import type { Tx } from "../../../db/transaction";
import { ROW_COLUMNS, type SecretRow } from "../secret.repository";

/** The shared secrets of a folder among some ids, locked in id order for the caller's transaction. */
export const lockFolderSecretsByIds = async (trx: Tx, folderId: string, ids: readonly string[]) => {
  const { rows } = await sql<SecretRow>`
    select ${ROW_COLUMNS} from secrets s
    where s.folder_id = ${folderId} and s.id = any(${[...ids]}::uuid[]) and s.type = 'shared'
    order by s.id for update of s`.execute(trx);
  return rows;
};

/** Every secret row (shared or not) of some ids in a folder goes. */
export const deleteFolderSecretsByIds = (trx: Tx, folderId: string, ids: readonly string[]) =>
  trx
    .deleteFrom("secrets")
    .where("folder_id", "=", folderId)
    .where("id", "in", [...ids])
    .execute();
