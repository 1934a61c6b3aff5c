import type { AppDeps } from "../../context";
import type { AppConnectionsTable } from "../../db/tables/rotation";
import type { Selectable } from "kysely";
import type { UsableConnection } from "./app-connection.types";

/** The associated data binding a connection's sealed credentials to its row. */
const aad = (id: string) => `app_connections:${id}:credentials`;

/** A connection's credentials sealed under the root key (org- and project-level connections alike). */
export const sealConnectionCredentials = (deps: AppDeps, id: string, credentials: object) =>
  deps.secretBox.encrypt(JSON.stringify(credentials), aad(id));

/** The row with its credentials opened: only for code that uses the connection, never for an answer. */
export const openConnection = (deps: AppDeps, row: Selectable<AppConnectionsTable>): UsableConnection =>
  ({
    id: row.id,
    orgId: row.org_id,
    projectId: row.project_id,
    name: row.name,
    app: row.app,
    credentials: JSON.parse(deps.secretBox.decrypt(row.encrypted_credentials, aad(row.id))) as object,
  }) as UsableConnection;
