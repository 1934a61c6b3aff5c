import { createHash, randomUUID } from "node:crypto";
import type { Selectable } from "kysely";
import type { AppConnection, AppConnectionAppName } from "@keyward/contract";
import { noteAudit, type RequestContext } from "../../context";
import { inTransaction } from "../../db/transaction";
import { isRestrictViolation, isUniqueViolation, isUuid } from "../../db/errors";
import type { AppConnectionsTable } from "../../db/tables/rotation";
import { BadRequestError, NotFoundError } from "../../errors";
import type { Ability } from "../../permissions";
import { assertCan } from "../authz/guard";
import { getOrgPermission } from "../authz/org-access";
import { getProjectPermission } from "../authz/project-access";
import { takeOverPassword, validateConnection } from "./app-connection.validate";
import { openConnection, sealConnectionCredentials } from "./app-connection.credentials";
import {
  deleteConnectionRow,
  findConnectionByName,
  findConnectionRow,
  insertConnectionRow,
  listConnectionRows,
  lockConnectionRow,
  updateConnectionRow,
} from "./app-connection.repository";
import { SHOWN_CREDENTIALS, type UsableConnection } from "./app-connection.types";

type Row = Selectable<AppConnectionsTable>;
type Credentials = Record<string, unknown>;

const APP_NAMES: Record<AppConnectionAppName, string> = {
  postgres: "PostgreSQL",
  mysql: "MySQL",
  redis: "Redis",
  ldap: "LDAP",
  aws: "AWS",
  github: "GitHub",
  gcp: "GCP",
  "azure-key-vault": "Azure Key Vault",
};

const notFound = (id: string) => new NotFoundError(`Could not find App Connection with ID ${id}`);

/**
 * A connection as someone who may only use it sees it: what it is called and what it is for, without
 * where it points or as whom (no host, port, database, user, URL or DN) and without its credentials' hash.
 */
const toNamedDto = (row: Row): AppConnection => ({
  id: row.id,
  name: row.name,
  description: row.description,
  version: row.version,
  orgId: row.org_id,
  projectId: row.project_id,
  app: row.app,
  method: row.method,
  credentials: {},
  credentialsHash: "",
  isPlatformManagedCredentials: row.is_platform_managed_credentials,
  gatewayId: row.gateway_id,
  createdAt: new Date(row.created_at).toISOString(),
  updatedAt: new Date(row.updated_at).toISOString(),
});

/** Answers to those who may read a connection show the fields its app allows (SHOWN_CREDENTIALS), never a secret. */
const toDto = (deps: RequestContext["deps"], row: Row): AppConnection => {
  const connection = openConnection(deps, row);
  const credentials = connection.credentials as Record<string, unknown>;
  const shown = Object.fromEntries(
    (SHOWN_CREDENTIALS[connection.app] as readonly string[]).flatMap((field) =>
      field in credentials ? [[field, credentials[field]]] : [],
    ),
  );
  return { ...toNamedDto(row), credentials: shown, credentialsHash: row.credentials_hash };
};

/**
 * A connection as the caller may see it: whole but the password with `read-app-connections` on it,
 * named only with just `connect-app-connections` (enough to pick it for a rotation), else undefined.
 */
const shownTo = (deps: RequestContext["deps"], ability: Ability, row: Row): AppConnection | undefined => {
  const subject = { connectionId: row.id };
  if (ability.can("read-app-connections", "app-connections", subject)) return toDto(deps, row);
  if (ability.can("connect-app-connections", "app-connections", subject)) return toNamedDto(row);
  return undefined;
};

/** One connection as the caller may see it; 403 (for reading) when they may neither read nor use it. */
const shownOrRefused = (deps: RequestContext["deps"], ability: Ability, row: Row) => {
  const shown = shownTo(deps, ability, row);
  if (!shown) assertCan(ability, "read-app-connections", "app-connections", { connectionId: row.id });
  return { appConnection: shown! };
};

/** The ability that decides over a connection: the project's for a project's connection, else the organization's. */
const abilityFor = async (ctx: RequestContext, projectId: string | null): Promise<Ability> =>
  projectId === null
    ? getOrgPermission(ctx.actor, ctx.actor.orgId)
    : (await getProjectPermission(ctx, projectId)).ability;

const requireConnection = async (ctx: RequestContext, app: AppConnectionAppName, id: string) => {
  const row = isUuid(id) ? await findConnectionRow(ctx.deps.db, id) : undefined;
  if (!row || row.org_id !== ctx.actor.orgId) throw notFound(id);
  const ability = await abilityFor(ctx, row.project_id).catch((error: unknown) => {
    throw error instanceof NotFoundError ? notFound(id) : error;
  });
  if (row.app !== app) throw new BadRequestError(`App Connection with ID ${id} is not for App "${app}"`);
  return { row, ability };
};

const usable = (
  row: Pick<Row, "id" | "org_id" | "project_id" | "name">,
  app: AppConnectionAppName,
  credentials: Credentials,
) =>
  ({
    id: row.id,
    orgId: row.org_id,
    projectId: row.project_id,
    name: row.name,
    app,
    credentials,
  }) as unknown as UsableConnection;

const hashOf = (sealed: string) => createHash("sha256").update(sealed).digest("hex");

const nameTaken = (name: string) => (error: unknown) => {
  if (isUniqueViolation(error)) throw new BadRequestError(`An App Connection with the name "${name}" already exists`);
  throw error;
};

const GATEWAYS = "Gateways are not supported for app connections yet";

export const listAppConnections = async (
  ctx: RequestContext,
  app: AppConnectionAppName | undefined,
  projectId?: string,
) => {
  const ability = await abilityFor(ctx, projectId ?? null);
  // Refused up front, so whether the answer is 403 never depends on how many connections exist.
  if (!ability.can("connect-app-connections", "app-connections"))
    assertCan(ability, "read-app-connections", "app-connections");
  const rows = await listConnectionRows(ctx.deps.db, ctx.actor.orgId, projectId ?? null, app);
  const appConnections: AppConnection[] = [];
  for (const row of rows) {
    const shown = shownTo(ctx.deps, ability, row);
    if (shown) appConnections.push(shown);
  }
  return { appConnections };
};

export const listAvailableAppConnections = async (
  ctx: RequestContext,
  app: AppConnectionAppName,
  projectId?: string,
) => {
  const ability = await abilityFor(ctx, projectId ?? null);
  const rows = await listConnectionRows(ctx.deps.db, ctx.actor.orgId, projectId ?? null, app);
  return {
    appConnections: rows
      .filter((row) => ability.can("connect-app-connections", "app-connections", { connectionId: row.id }))
      .map((row) => ({ app: row.app, name: row.name, id: row.id, projectId: row.project_id, orgId: row.org_id })),
  };
};

export const getAppConnection = async (ctx: RequestContext, app: AppConnectionAppName, id: string) => {
  const { row, ability } = await requireConnection(ctx, app, id);
  return shownOrRefused(ctx.deps, ability, row);
};

export const getAppConnectionByName = async (
  ctx: RequestContext,
  app: AppConnectionAppName,
  name: string,
  projectId?: string,
) => {
  const ability = await abilityFor(ctx, projectId ?? null);
  const row = await findConnectionByName(ctx.deps.db, ctx.actor.orgId, projectId ?? null, app, name);
  if (!row) throw new NotFoundError(`Could not find App Connection with name ${name}`);
  return shownOrRefused(ctx.deps, ability, row);
};

export type CreateConnectionBody = {
  name: string;
  description?: string | null;
  method: string;
  credentials: Credentials;
  isPlatformManagedCredentials: boolean;
  gatewayId?: string | null;
  projectId?: string;
};

export const createAppConnection = async (
  ctx: RequestContext,
  app: AppConnectionAppName,
  body: CreateConnectionBody,
) => {
  const projectId = body.projectId ?? null;
  const ability = await abilityFor(ctx, projectId);
  assertCan(ability, "create-app-connections", "app-connections");
  if (body.gatewayId) throw new BadRequestError(GATEWAYS);
  const id = randomUUID();
  const draft = usable({ id, org_id: ctx.actor.orgId, project_id: projectId, name: body.name }, app, body.credentials);
  await validateConnection(ctx, draft);
  let credentials = body.credentials;
  if (body.isPlatformManagedCredentials) {
    credentials = { ...credentials, password: await takeOverPassword(ctx, draft) };
  }
  const sealed = sealConnectionCredentials(ctx.deps, id, credentials);
  const row = await inTransaction(ctx, async (trx) => {
    const inserted = await insertConnectionRow(trx, {
      id,
      org_id: ctx.actor.orgId,
      project_id: projectId,
      app,
      name: body.name,
      description: body.description ?? null,
      method: body.method,
      encrypted_credentials: sealed,
      credentials_hash: hashOf(sealed),
      is_platform_managed_credentials: body.isPlatformManagedCredentials,
      gateway_id: null,
    });
    noteAudit(ctx, {
      ...(projectId ? { projectId } : {}),
      metadata: {
        name: body.name,
        method: body.method,
        app,
        connectionId: id,
        isPlatformManagedCredentials: body.isPlatformManagedCredentials,
      },
    });
    return inserted;
  }).catch(nameTaken(body.name));
  return { appConnection: toDto(ctx.deps, row) };
};

export type UpdateConnectionBody = {
  name?: string;
  description?: string | null;
  credentials?: Credentials;
  isPlatformManagedCredentials?: boolean;
  gatewayId?: string | null;
};

export const updateAppConnection = async (
  ctx: RequestContext,
  app: AppConnectionAppName,
  id: string,
  body: UpdateConnectionBody,
) => {
  const { row, ability } = await requireConnection(ctx, app, id);
  assertCan(ability, "edit-app-connections", "app-connections", { connectionId: row.id });
  if (body.gatewayId) throw new BadRequestError(GATEWAYS);
  if (row.is_platform_managed_credentials && (body.credentials || body.isPlatformManagedCredentials === false))
    throw new BadRequestError("Cannot update credentials or management status for platform managed connections");
  if (body.isPlatformManagedCredentials && !row.is_platform_managed_credentials && !body.credentials)
    throw new BadRequestError("Credentials required to transition to platform managed credentials");
  let sealed: string | undefined;
  if (body.credentials) {
    const draft = usable(row, app, body.credentials);
    await validateConnection(ctx, draft);
    let credentials = body.credentials;
    if (body.isPlatformManagedCredentials)
      credentials = { ...credentials, password: await takeOverPassword(ctx, draft) };
    sealed = sealConnectionCredentials(ctx.deps, row.id, credentials);
  }
  const updated = await inTransaction(ctx, async (trx) => {
    if (!(await lockConnectionRow(trx, row.id))) throw notFound(id);
    const next = await updateConnectionRow(trx, row.id, {
      ...(body.name !== undefined ? { name: body.name } : {}),
      ...(body.description !== undefined ? { description: body.description } : {}),
      ...(sealed ? { encrypted_credentials: sealed, credentials_hash: hashOf(sealed) } : {}),
      // AWS credentials say how they sign in: a role to assume, or an access key.
      ...(sealed && app === "aws" ? { method: body.credentials?.roleArn ? "assume-role" : "access-key" } : {}),
      ...(body.isPlatformManagedCredentials !== undefined
        ? { is_platform_managed_credentials: body.isPlatformManagedCredentials }
        : {}),
    });
    noteAudit(ctx, {
      ...(row.project_id ? { projectId: row.project_id } : {}),
      metadata: { name: next.name, app, connectionId: row.id, credentialsUpdated: sealed !== undefined },
    });
    return next;
  }).catch(nameTaken(body.name ?? row.name));
  return { appConnection: toDto(ctx.deps, updated) };
};

export const deleteAppConnection = async (ctx: RequestContext, app: AppConnectionAppName, id: string) => {
  const { row, ability } = await requireConnection(ctx, app, id);
  assertCan(ability, "delete-app-connections", "app-connections", { connectionId: row.id });
  await inTransaction(ctx, async (trx) => {
    await deleteConnectionRow(trx, row.id);
    noteAudit(ctx, {
      ...(row.project_id ? { projectId: row.project_id } : {}),
      metadata: { name: row.name, app, connectionId: row.id },
    });
  }).catch((error: unknown) => {
    if (isRestrictViolation(error))
      throw new BadRequestError(
        "Cannot delete App Connection with existing connections. Remove all existing connections and try again.",
      );
    throw error;
  });
  return { appConnection: toDto(ctx.deps, row) };
};

export const appName = (app: AppConnectionAppName) => APP_NAMES[app];
