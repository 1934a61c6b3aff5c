import { z } from "zod";
import { inTransaction, type Tx } from "../../db/transaction";
import { isUniqueViolation } from "../../db/errors";
import { recordProtocolChange, scimClientActor } from "../audit/audit-protocol";
import {
  changeProvisionedGroupMembers,
  createProvisionedGroup,
  deleteProvisionedGroup,
  findGroupForProvisioning,
  findGroupNamed,
  listProvisionedGroupMembers,
  pageGroupsForProvisioning,
  renameProvisionedGroup,
  type GroupRow,
} from "../groups/group-provisioning.service";
import type { ScimContext } from "./scim-auth";
import {
  ScimError,
  SCIM_GROUP_SCHEMA,
  badRequest,
  listResponse,
  pagingOf,
  parseFilter,
  parseScim,
  patchOperationsOf,
} from "./scim-protocol";

const GROUP_FILTERS = { displayname: "displayName" } as const;

const DisplayName = z.string().trim().min(1).max(50);
const Members = z
  .array(z.object({ value: z.string().trim().min(1).max(64), display: z.unknown().optional() }))
  .max(1000);

const GroupBody = z
  .object({
    schemas: z.array(z.string().max(256)).max(10).optional(),
    displayName: DisplayName,
    members: Members.optional(),
  })
  .passthrough();

const notFound = () => new ScimError(404, "Group not found");
const nameTaken = (name: string) => new ScimError(409, `A group named ${name} already exists`, "uniqueness");

const toScimGroups = async (ctx: ScimContext, groups: GroupRow[], withMembers = true) => {
  const members = withMembers
    ? await listProvisionedGroupMembers(
        ctx.deps.db,
        ctx.orgId,
        groups.map((g) => g.id),
      )
    : [];
  return groups.map((group) => ({
    schemas: [SCIM_GROUP_SCHEMA],
    id: group.id,
    displayName: group.name,
    ...(withMembers
      ? {
          members: members
            .filter((m) => m.group_id === group.id)
            .map((m) => ({ value: m.membership_id, display: m.email })),
        }
      : {}),
    meta: { resourceType: "Group" },
  }));
};

const requireGroup = async (ctx: ScimContext, id: string) => {
  const group = await findGroupForProvisioning(ctx.deps.db, ctx.orgId, id);
  if (!group) throw notFound();
  return group;
};

const getScimGroupOf = async (ctx: ScimContext, group: GroupRow) => (await toScimGroups(ctx, [group]))[0]!;

const record = (ctx: ScimContext, trx: Tx, type: string, metadata: Record<string, unknown>) =>
  recordProtocolChange(trx, ctx.deps, {
    orgId: ctx.orgId,
    projectId: null,
    actor: scimClientActor(ctx.tokenId),
    type,
    metadata,
    origin: ctx.origin,
  });

/** A name another group of the organization holds is a 409; the unique index settles a race the same way. */
const naming = async <T>(ctx: ScimContext, name: string, own: string | null, work: () => Promise<T>) => {
  const same = await findGroupNamed(ctx.deps.db, ctx.orgId, name);
  if (same && same.id !== own) throw nameTaken(name);
  try {
    return await work();
  } catch (error) {
    if (isUniqueViolation(error)) throw nameTaken(name);
    throw error;
  }
};

export const listScimGroups = async (ctx: ScimContext, query: Record<string, unknown>) => {
  const filter = parseFilter(query.filter, GROUP_FILTERS);
  const paging = pagingOf(query);
  const { rows, total } = await pageGroupsForProvisioning(ctx.deps.db, ctx.orgId, { name: filter?.value, ...paging });
  const excluded = typeof query.excludedAttributes === "string" ? query.excludedAttributes.toLowerCase() : "";
  const withMembers = !excluded.split(",").some((a) => a.trim() === "members");
  return listResponse(await toScimGroups(ctx, rows, withMembers), total, paging.startIndex);
};

export const getScimGroup = async (ctx: ScimContext, id: string) => getScimGroupOf(ctx, await requireGroup(ctx, id));

export const createScimGroup = async (ctx: ScimContext, input: unknown) => {
  const body = parseScim(GroupBody, input);
  const group = await naming(ctx, body.displayName, null, () =>
    inTransaction(ctx.deps.db, async (trx) => {
      const row = await createProvisionedGroup(trx, ctx.orgId, body.displayName);
      const set = (body.members ?? []).map((m) => m.value);
      await changeProvisionedGroupMembers(trx, ctx.orgId, row.id, { set });
      await record(ctx, trx, "scim-create-group", { groupId: row.id, name: row.name, members: set.length });
      return row;
    }),
  );
  return getScimGroupOf(ctx, group);
};

export const replaceScimGroup = async (ctx: ScimContext, id: string, input: unknown) => {
  const body = parseScim(GroupBody.extend({ members: Members }), input);
  const group = await requireGroup(ctx, id);
  await naming(ctx, body.displayName, group.id, () =>
    inTransaction(ctx.deps.db, async (trx) => {
      if (body.displayName !== group.name) await renameProvisionedGroup(trx, group.id, body.displayName);
      const set = body.members.map((m) => m.value);
      await changeProvisionedGroupMembers(trx, ctx.orgId, group.id, { set });
      await record(ctx, trx, "scim-update-group", { groupId: group.id, name: body.displayName, members: set.length });
    }),
  );
  return getScimGroup(ctx, id);
};

const memberValues = (value: unknown) => parseScim(Members, Array.isArray(value) ? value : [value]).map((m) => m.value);

const MEMBER_PATH = /^members\s*\[\s*value\s+eq\s+"([^"]{1,64})"\s*\]$/i;

type MemberStep = { set: string[] } | { add: string[] } | { remove: string[] | "all" };
/** A PATCH's effect: the new name, and the member changes in the order the operations gave them. */
type GroupChange = { name?: string; steps: MemberStep[] };

const applyOperation = (
  change: GroupChange,
  op: "add" | "replace" | "remove",
  path: string | undefined,
  value: unknown,
) => {
  const target = path?.trim().toLowerCase();
  const one = path ? MEMBER_PATH.exec(path.trim()) : null;
  if (op === "remove") {
    if (one) return void change.steps.push({ remove: [one[1]!] });
    if (target !== "members") throw badRequest("A remove operation needs the members path", "noTarget");
    change.steps.push({ remove: value === undefined ? "all" : memberValues(value) });
    return;
  }
  if (target === "members") {
    change.steps.push(op === "replace" ? { set: memberValues(value) } : { add: memberValues(value) });
    return;
  }
  if (target === "displayname") {
    change.name = parseScim(DisplayName, value);
    return;
  }
  if (target === undefined) {
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      throw badRequest("An operation without a path needs an object value", "invalidSyntax");
    }
    for (const [key, inner] of Object.entries(value)) {
      if (key === "displayName" || key === "members") applyOperation(change, op, key, inner);
    }
  }
  // Other attributes (externalId, …) are not kept by Keyward and are accepted as they are.
};

export const patchScimGroup = async (ctx: ScimContext, id: string, input: unknown) => {
  const operations = patchOperationsOf(input);
  const group = await requireGroup(ctx, id);
  const change: GroupChange = { steps: [] };
  for (const { op, path, value } of operations) applyOperation(change, op, path, value);
  const name = change.name ?? group.name;
  await naming(ctx, name, group.id, () =>
    inTransaction(ctx.deps.db, async (trx) => {
      if (name !== group.name) await renameProvisionedGroup(trx, group.id, name);
      for (const step of change.steps) await changeProvisionedGroupMembers(trx, ctx.orgId, group.id, step);
      await record(ctx, trx, "scim-update-group", { groupId: group.id, name, memberChanges: change.steps.length });
    }),
  );
  return getScimGroup(ctx, id);
};

export const deleteScimGroup = async (ctx: ScimContext, id: string) => {
  const group = await requireGroup(ctx, id);
  await inTransaction(ctx.deps.db, async (trx) => {
    await deleteProvisionedGroup(trx, group.id);
    await record(ctx, trx, "scim-delete-group", { groupId: group.id, name: group.name });
  });
  return {};
};
