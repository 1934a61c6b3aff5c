import type { AppDeps, RequestContext } from "../../context";
import { BadRequestError, NotFoundError } from "../../errors";
import { isUuid } from "../../db/errors";
import { assertCan } from "../authz/guard";
import { getOrgPermission } from "../authz/org-access";
import { getProjectPermission } from "../authz/project-access";
import { openConnection } from "./app-connection.credentials";
import { findConnectionRow } from "./app-connection.repository";
import type { AppConnectionApp, UsableConnection } from "./app-connection.types";

export type { AppConnectionApp, UsableConnection } from "./app-connection.types";
export { secretsOf } from "./app-connection.validate";

const connectionNotFound = (id: string) => new NotFoundError(`Could not find App Connection with ID ${id}`);

/**
 * The connection a rotation in `projectId` uses, opened: 404 when unknown or another organization's,
 * 400 when it is for another app or another project's, 403 without `connect-app-connections` (on the
 * project for a project's connection, on the organization for an organization's).
 */
export const getConnectionForUse = async (
  ctx: RequestContext,
  connectionId: string,
  projectId: string,
  app: AppConnectionApp,
): Promise<UsableConnection> => {
  const row = isUuid(connectionId) ? await findConnectionRow(ctx.deps.db, connectionId) : undefined;
  if (!row || row.org_id !== ctx.actor.orgId) throw connectionNotFound(connectionId);
  if (row.app !== app) throw new BadRequestError(`App Connection with ID ${connectionId} is not for App "${app}"`);
  if (row.project_id !== null && row.project_id !== projectId)
    throw new BadRequestError(
      `You cannot connect project App Connection with ID "${connectionId}" from project with ID "${row.project_id}" to project with ID "${projectId}"`,
    );
  const ability =
    row.project_id === null
      ? getOrgPermission(ctx.actor, row.org_id)
      : (await getProjectPermission(ctx, row.project_id)).ability;
  assertCan(ability, "connect-app-connections", "app-connections", { connectionId: row.id });
  return openConnection(ctx.deps, row);
};

/** For background jobs: the connection opened, or undefined when it is gone. */
export const openConnectionById = async (deps: AppDeps, connectionId: string) => {
  const row = await findConnectionRow(deps.db, connectionId);
  return row ? openConnection(deps, row) : undefined;
};
