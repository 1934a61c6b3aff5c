import type { LegacyPermission, PrivilegePermission } from "@keyward/contract";
import type { RequestContext } from "../../context";
import { BadRequestError, NotFoundError, UnauthorizedError } from "../../errors";
import { getProjectPermissionBySlug } from "../authz/project-access";
import { assertValidTemplates } from "../roles/roles.service";
import { expandLegacyPermissions } from "./legacy-permissions";
import { toPrivilegeDto } from "./privilege.dto";
import { findPrivilegeBySlug, type PrivilegeRow } from "./privileges.repository";
import {
  createPrivilege,
  identity,
  deletePrivilege,
  readPrivilegeBySlug,
  readPrivileges,
  updatePrivilege,
  windowOf,
  type PrivilegeTiming,
} from "./privileges.service";

type LegacyRules = { permissions?: LegacyPermission[]; privilegePermission?: PrivilegePermission };
type Lookup = { identityId: string; projectSlug: string };

/** Reference §1.8: a v1 write without any permission form is refused as 401, before any lookup. */
const requireLegacyRules = (input: LegacyRules) => {
  const rules = expandLegacyPermissions(input);
  if (!rules) throw new UnauthorizedError("Permission or privilegePermission must be provided");
  assertValidTemplates(rules);
  return rules;
};

const v1Dto = (row: Parameters<typeof toPrivilegeDto>[0]) => toPrivilegeDto(row, { v1: true });

export const createPrivilegeV1 = async (
  ctx: RequestContext,
  body: Lookup & LegacyRules & { slug?: string },
  timing: PrivilegeTiming,
) => {
  const rules = requireLegacyRules(body);
  const permission = await getProjectPermissionBySlug(ctx, body.projectSlug);
  return v1Dto(await createPrivilege(ctx, permission, identity(body.identityId), { slug: body.slug, rules, timing }));
};

const requireBySlug = async (ctx: RequestContext, lookup: Lookup & { privilegeSlug: string }) => {
  const permission = await getProjectPermissionBySlug(ctx, lookup.projectSlug);
  const holder = identity(lookup.identityId);
  const row = await findPrivilegeBySlug(ctx.deps.db, permission.project.id, holder, lookup.privilegeSlug);
  if (!row) throw new NotFoundError(`Privilege with slug ${lookup.privilegeSlug} not found`);
  return { permission, holder, row };
};

type Details = LegacyRules & {
  slug?: string;
  isTemporary?: boolean;
  temporaryMode?: string;
  temporaryRange?: string;
  temporaryAccessStartTime?: string;
};

/** v1 PATCH merges the given temporary fields over the stored ones. */
const mergedTiming = (row: PrivilegeRow, details: Details): PrivilegeTiming => {
  if (!(details.isTemporary ?? row.is_temporary)) return { isTemporary: false };
  const range = details.temporaryRange ?? row.temporary_range;
  const start = details.temporaryAccessStartTime ?? row.temporary_access_start_time;
  if (!range || !start) throw new BadRequestError("Temporary mode expects start time and range");
  return {
    isTemporary: true,
    temporaryMode: details.temporaryMode ?? row.temporary_mode ?? "relative",
    temporaryRange: range,
    temporaryAccessStartTime: start,
  };
};

export const updatePrivilegeV1 = async (
  ctx: RequestContext,
  body: Lookup & { privilegeSlug: string; privilegeDetails: Details },
) => {
  const rules = requireLegacyRules(body.privilegeDetails);
  const { permission, holder, row } = await requireBySlug(ctx, body);
  const window = windowOf(mergedTiming(row, body.privilegeDetails));
  return v1Dto(
    await updatePrivilege(ctx, permission, holder, row, { slug: body.privilegeDetails.slug, rules, window }),
  );
};

export const deletePrivilegeV1 = async (ctx: RequestContext, body: Lookup & { privilegeSlug: string }) => {
  const { permission, holder, row } = await requireBySlug(ctx, body);
  return v1Dto(await deletePrivilege(ctx, permission, holder, row));
};

export const getPrivilegeV1 = async (ctx: RequestContext, slug: string, query: Lookup) => {
  const permission = await getProjectPermissionBySlug(ctx, query.projectSlug);
  return v1Dto(await readPrivilegeBySlug(ctx, permission, identity(query.identityId), slug));
};

export const listPrivilegesV1 = async (ctx: RequestContext, query: Lookup) => {
  const permission = await getProjectPermissionBySlug(ctx, query.projectSlug);
  return (await readPrivileges(ctx, permission, identity(query.identityId))).map(v1Dto);
};
