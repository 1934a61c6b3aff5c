import { inTransaction } from "../../db/transaction";
import type { GatewayAuthMethodInput } from "@keyward/contract";
import { noteAudit, type RequestContext } from "../../context";
import type { Database } from "../../db/database";
import { isForeignKeyViolation, isUniqueViolation, isUuid } from "../../db/errors";
import { BadRequestError, NotFoundError } from "../../errors";
import { assertCan } from "../authz/guard";
import { orgAbilityOf } from "../authz/org-access";
import { requireIdentity } from "../authz/identity-lookup";
import { toGatewayDto } from "./gateway.dto";
import {
  deleteAwsConfig,
  deleteGatewayRow,
  findGatewayInOrg as findGatewayRowInOrg,
  findGatewayView,
  insertGateway,
  listGatewayViews,
  updateGatewayRow,
  upsertAwsConfig,
  type AwsConfigValues,
} from "./gateway.repository";
import { deleteUnusedEnrollmentTokens } from "./gateway-token.repository";

const gatewayNotFound = (gatewayId: string) => new NotFoundError(`Gateway ${gatewayId} not found`);

/** A gateway of the caller's organization; another organization's is indistinguishable from none. */
export const requireGateway = async (ctx: RequestContext, gatewayId: string) => {
  const gateway = isUuid(gatewayId) ? await findGatewayRowInOrg(ctx.deps.db, ctx.actor.orgId, gatewayId) : undefined;
  if (!gateway) throw gatewayNotFound(gatewayId);
  return gateway;
};

const loadGatewayDto = async (db: Database, orgId: string, gatewayId: string) => {
  const row = await findGatewayView(db, orgId, gatewayId);
  if (!row) throw gatewayNotFound(gatewayId);
  return toGatewayDto(row);
};

const toAwsValues = (input: Extract<GatewayAuthMethodInput, { method: "aws" }>): AwsConfigValues => ({
  sts_endpoint: input.stsEndpoint,
  allowed_principal_arns: input.allowedPrincipalArns,
  allowed_account_ids: input.allowedAccountIds,
});

const uniqueViolationMessage = (error: unknown, name: string, identityId?: string) => {
  if (isUniqueViolation(error, "gateways_org_name_key")) return `Gateway with name "${name}" already exists`;
  if (isUniqueViolation(error, "gateways_identity_id_key"))
    return `Identity with ID ${identityId} is already linked to a gateway`;
  return undefined;
};

export const createGateway = async (
  ctx: RequestContext,
  body: { name: string; authMethod: GatewayAuthMethodInput },
) => {
  assertCan(orgAbilityOf(ctx.actor), "create-gateways", "gateway");
  const { authMethod } = body;
  const identityId = authMethod.method === "identity" ? (await requireIdentity(ctx, authMethod.identityId)).id : null;
  let gatewayId: string;
  try {
    gatewayId = await inTransaction(ctx, async (trx) => {
      const { id } = await insertGateway(trx, {
        org_id: ctx.actor.orgId,
        name: body.name,
        auth_method: authMethod.method,
        identity_id: identityId,
      });
      if (authMethod.method === "aws") await upsertAwsConfig(trx, id, toAwsValues(authMethod));
      noteAudit(ctx, { metadata: { gatewayId: id } });
      return id;
    });
  } catch (error) {
    const message = uniqueViolationMessage(error, body.name, identityId ?? undefined);
    if (message) throw new BadRequestError(message);
    throw error;
  }
  return loadGatewayDto(ctx.deps.db, ctx.actor.orgId, gatewayId);
};

export const listGateways = async (ctx: RequestContext) => {
  assertCan(orgAbilityOf(ctx.actor), "list-gateways", "gateway");
  const rows = await listGatewayViews(ctx.deps.db, ctx.actor.orgId);
  return rows.map(toGatewayDto);
};

/** Existence first, then `list-gateways`. */
export const getGateway = async (ctx: RequestContext, gatewayId: string) => {
  const row = isUuid(gatewayId) ? await findGatewayView(ctx.deps.db, ctx.actor.orgId, gatewayId) : undefined;
  if (!row) throw gatewayNotFound(gatewayId);
  assertCan(orgAbilityOf(ctx.actor), "list-gateways", "gateway");
  return toGatewayDto(row);
};

/**
 * Rename, or switch between token and AWS auth. Running gateways keep their access token across a
 * switch (revoke ends it); unused enrolment tokens go, since they only serve the token method.
 */
export const updateGateway = async (
  ctx: RequestContext,
  gatewayId: string,
  body: { name?: string; authMethod?: GatewayAuthMethodInput },
) => {
  assertCan(orgAbilityOf(ctx.actor), "edit-gateways", "gateway");
  const gateway = await requireGateway(ctx, gatewayId);
  const next = body.authMethod;
  if (next && gateway.auth_method === "identity") {
    throw new BadRequestError(
      "This gateway is using legacy machine identity auth. Create a new gateway with the desired auth method instead of migrating this one.",
    );
  }
  if (next?.method === "identity") {
    throw new BadRequestError(
      "A gateway cannot be switched to identity auth. Create a new gateway linked to the identity instead.",
    );
  }
  if (body.name === undefined && !next) return loadGatewayDto(ctx.deps.db, ctx.actor.orgId, gatewayId);
  try {
    await inTransaction(ctx, async (trx) => {
      await updateGatewayRow(trx, gateway.id, { name: body.name, auth_method: next?.method });
      if (next?.method === "aws") {
        await upsertAwsConfig(trx, gateway.id, toAwsValues(next));
        await deleteUnusedEnrollmentTokens(trx, gateway.id);
      }
      if (next?.method === "token") await deleteAwsConfig(trx, gateway.id);
    });
  } catch (error) {
    const message = uniqueViolationMessage(error, body.name ?? gateway.name);
    if (message) throw new BadRequestError(message);
    throw error;
  }
  return loadGatewayDto(ctx.deps.db, ctx.actor.orgId, gatewayId);
};

/** Deleting a gateway deletes its tokens and AWS config with it (foreign key cascade). */
export const deleteGateway = async (ctx: RequestContext, gatewayId: string) => {
  const gateway = await requireGateway(ctx, gatewayId);
  assertCan(orgAbilityOf(ctx.actor), "delete-gateways", "gateway");
  const dto = await loadGatewayDto(ctx.deps.db, ctx.actor.orgId, gateway.id);
  try {
    await inTransaction(ctx, (trx) => deleteGatewayRow(trx, gateway.id));
  } catch (error) {
    if (isForeignKeyViolation(error)) {
      throw new BadRequestError("Failed to delete gateway because it is attached to active resources");
    }
    throw error;
  }
  return dto;
};

/** A gateway of the organization, for auth methods that route through one; undefined for anything else. */
export const findGatewayInOrg = (db: Database, orgId: string, gatewayId: string) =>
  findGatewayRowInOrg(db, orgId, gatewayId);
