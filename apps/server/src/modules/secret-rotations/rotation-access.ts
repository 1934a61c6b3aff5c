import type { RequestContext } from "../../context";
import { BadRequestError, ForbiddenError } from "../../errors";
import type { Ability } from "../../permissions";
import type { UsableConnection } from "../app-connections/app-connection.service";
import { getOrgPermission } from "../authz/org-access";
import { getProjectPermission } from "../authz/project-access";
import { assertSecretAction, secretObject } from "../secrets/secret-access";
import type { SecretStamp } from "../secrets/secret-apply";
import { parseRotationStatement, type StatementDialect } from "./rotation-statement";

const assertMayEditConnection = async (ctx: RequestContext, connection: UsableConnection) => {
  const ability =
    connection.projectId === null
      ? getOrgPermission(ctx.actor, connection.orgId)
      : (await getProjectPermission(ctx, connection.projectId)).ability;
  const object = { connectionId: connection.id };
  if (ability.can("edit-app-connections", "app-connections", object)) return;
  throw new ForbiddenError(
    `A custom rotation statement runs as the user of App Connection with ID ${connection.id}: setting one needs permission to edit that connection (edit-app-connections on app-connections)`,
    "PermissionDenied",
    ability.rulesFor("edit-app-connections", "app-connections").map((rule) => ({
      action: rule.action,
      inverted: rule.inverted,
      subject: rule.subject,
      ...(rule.conditions ? { conditions: rule.conditions } : {}),
    })),
  );
};

/**
 * A custom rotation statement runs as the connection's own user, so only someone who may change the
 * connection itself may set one: `edit-app-connections` on it, judged by the organization's ability
 * for an organization's connection and by the project's for a project's, as a change of the
 * connection is (403). Using the connection (`connect-app-connections`) is not enough. Then the
 * statement must be one statement of the rotation's dialect with well-placed placeholders (400).
 */
export const assertMayUseStatement = async (
  ctx: RequestContext,
  connection: UsableConnection,
  dialect: StatementDialect | undefined,
  statement: string,
) => {
  await assertMayEditConnection(ctx, connection);
  if (!dialect) throw new BadRequestError("This kind of rotation takes no rotation statement");
  parseRotationStatement(dialect, statement);
};

/**
 * Deleting a rotation with its secrets deletes each mapped secret that exists: the caller needs
 * `delete` on every one of them, judged on its folder, name and tags as they are, as a secret's own
 * delete is (403 for the first one refused).
 */
export const assertMayDeleteMappedSecrets = (
  ability: Ability,
  at: { environment: string; secretPath: string },
  secrets: readonly SecretStamp[],
) => {
  for (const secret of secrets)
    assertSecretAction(ability, "delete", secretObject(at.environment, at.secretPath, secret.key, secret.tagSlugs));
};
