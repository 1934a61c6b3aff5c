import { z } from "zod";
import { inTransaction, type Tx } from "../../db/transaction";
import { isUuid } from "../../db/errors";
import { recordProtocolChange, scimClientActor } from "../audit/audit-protocol";
import {
  getMemberForProvisioning,
  isExternalIdTaken,
  pageMembersForProvisioning,
  provisionMember,
  removeMember,
  setMemberActive,
  updateProvisionedProfile,
  type MemberFilter,
  type ProvisionedMemberRow,
} from "../users/provisioning.service";
import type { ScimContext } from "./scim-auth";
import {
  ScimError,
  SCIM_USER_SCHEMA,
  badRequest,
  listResponse,
  pagingOf,
  parseFilter,
  parseScim,
  patchOperationsOf,
  scimBoolean,
} from "./scim-protocol";

/** The alias a provisioned person's SCIM userName is kept as. */
const ALIAS = "scim";

const USER_FILTERS: Record<string, MemberFilter["attribute"]> = {
  username: "userName",
  externalid: "externalId",
  "emails.value": "email",
  emails: "email",
  displayname: "displayName",
};

const toScimUser = (row: ProvisionedMemberRow) => ({
  schemas: [SCIM_USER_SCHEMA],
  id: row.id,
  userName: row.external_id ?? row.email,
  name: { givenName: row.first_name, familyName: row.last_name },
  emails: [{ primary: true, value: row.email, type: "work" }],
  displayName: `${row.first_name} ${row.last_name}`.trim() || row.email,
  active: row.is_active,
  meta: { resourceType: "User" },
});

const Name = z
  .object({ givenName: z.string().max(128).optional(), familyName: z.string().max(128).optional() })
  .passthrough();

const UserBody = z
  .object({
    schemas: z.array(z.string().max(256)).max(10).optional(),
    userName: z.string().trim().min(1).max(320),
    name: Name.optional(),
    emails: z
      .array(z.object({ value: z.string().trim().max(320), primary: z.unknown().optional() }).passthrough())
      .max(20)
      .optional(),
    active: z.unknown().optional(),
  })
  .passthrough();
type UserBody = z.infer<typeof UserBody>;

const Email = z.string().email().max(320);

/** The primary e-mail, else the first, else a userName that is an e-mail. */
const emailOf = (body: UserBody) => {
  const emails = body.emails ?? [];
  const chosen = emails.find((e) => e.primary === true || e.primary === "true") ?? emails[0];
  const email = (chosen?.value ?? body.userName).toLowerCase();
  if (!Email.safeParse(email).success)
    throw badRequest("The user needs an e-mail address (emails, or a userName that is one)");
  return email;
};

const userNameTaken = (userName: string) =>
  new ScimError(409, `A user with userName ${userName} already exists`, "uniqueness");

const notFound = () => new ScimError(404, "User not found");

const requireMember = async (ctx: ScimContext, id: string, db: Tx | ScimContext["deps"]["db"] = ctx.deps.db) => {
  const row = isUuid(id) ? await getMemberForProvisioning(db, ctx.orgId, ALIAS, id) : undefined;
  if (!row) throw notFound();
  return row;
};

const record = (ctx: ScimContext, trx: Tx, type: string, metadata: Record<string, unknown>) =>
  recordProtocolChange(trx, ctx.deps, {
    orgId: ctx.orgId,
    projectId: null,
    actor: scimClientActor(ctx.tokenId),
    type,
    metadata,
    origin: ctx.origin,
  });

const assertUserNameFree = async (ctx: ScimContext, trx: Tx, userName: string, own?: ProvisionedMemberRow) => {
  if (own && own.external_id === userName) return;
  if (await isExternalIdTaken(trx, ctx.orgId, ALIAS, userName)) {
    throw userNameTaken(userName);
  }
};

export const listScimUsers = async (ctx: ScimContext, query: Record<string, unknown>) => {
  const filter = parseFilter(query.filter, USER_FILTERS);
  const paging = pagingOf(query);
  const { rows, total } = await pageMembersForProvisioning(ctx.deps.db, ctx.orgId, ALIAS, { filter, ...paging });
  return listResponse(rows.map(toScimUser), total, paging.startIndex);
};

export const getScimUser = async (ctx: ScimContext, id: string) => toScimUser(await requireMember(ctx, id));

export const createScimUser = async (ctx: ScimContext, input: unknown) => {
  const body = parseScim(UserBody, input);
  const email = emailOf(body);
  const active = body.active === undefined ? true : scimBoolean(body.active, "active");
  const membershipId = await inTransaction(ctx.deps.db, async (trx) => {
    await assertUserNameFree(ctx, trx, body.userName);
    const member = await provisionMember(trx, {
      orgId: ctx.orgId,
      email,
      firstName: body.name?.givenName ?? "",
      lastName: body.name?.familyName ?? "",
      aliasType: ALIAS,
      externalId: body.userName,
      now: new Date(ctx.deps.clock.now()),
    });
    if (member.foreign) {
      throw new ScimError(
        409,
        `${email} already has a Keyward account in another organization; they join this one by signing in through its single sign-on`,
        "uniqueness",
      );
    }
    if (!member.aliasClaimed) throw userNameTaken(body.userName);
    const before = await getMemberForProvisioning(trx, ctx.orgId, ALIAS, member.membershipId);
    if (before!.is_active !== active) await setMemberActive(ctx.deps, trx, { orgId: ctx.orgId, ...member }, active);
    await record(ctx, trx, "scim-provision-user", {
      membershipId: member.membershipId,
      userId: member.userId,
      email,
      userName: body.userName,
      active,
    });
    return member.membershipId;
  });
  return getScimUser(ctx, membershipId);
};

type UserDraft = { userName: string; firstName: string; lastName: string; active: boolean };

/** Apply a draft: profile and userName, then activity; one event says what happened. */
const applyDraft = async (ctx: ScimContext, id: string, draft: (row: ProvisionedMemberRow) => UserDraft) => {
  await inTransaction(ctx.deps.db, async (trx) => {
    const row = await requireMember(ctx, id, trx);
    const next = draft(row);
    if (next.userName !== (row.external_id ?? row.email)) await assertUserNameFree(ctx, trx, next.userName, row);
    const member = { orgId: ctx.orgId, membershipId: row.id, userId: row.user_id! };
    const claimed = await updateProvisionedProfile(trx, {
      orgId: ctx.orgId,
      userId: member.userId,
      aliasType: ALIAS,
      externalId: next.userName !== row.external_id ? next.userName : undefined,
      firstName: next.firstName,
      lastName: next.lastName,
    });
    if (!claimed) throw userNameTaken(next.userName);
    if (next.active !== row.is_active) await setMemberActive(ctx.deps, trx, member, next.active);
    const type =
      next.active === row.is_active
        ? "scim-update-user"
        : next.active
          ? "scim-reactivate-user"
          : "scim-deactivate-user";
    await record(ctx, trx, type, {
      membershipId: row.id,
      userId: member.userId,
      userName: next.userName,
      active: next.active,
    });
  });
  return getScimUser(ctx, id);
};

export const replaceScimUser = async (ctx: ScimContext, id: string, input: unknown) => {
  const body = parseScim(UserBody, input);
  if (body.active === undefined) throw badRequest("active is required", "invalidSyntax");
  const active = scimBoolean(body.active, "active");
  return applyDraft(ctx, id, () => ({
    userName: body.userName,
    firstName: body.name?.givenName ?? "",
    lastName: body.name?.familyName ?? "",
    active,
  }));
};

const text = (value: unknown, name: string) => {
  if (typeof value !== "string" || value.length > 320) throw badRequest(`${name} must be a string`);
  return value.trim();
};

/** One attribute of a PATCH; attributes Keyward does not keep (emails, titles, …) are accepted and ignored. */
const setAttribute = (draft: UserDraft, path: string, value: unknown) => {
  switch (path.toLowerCase()) {
    case "active":
      draft.active = scimBoolean(value, "active");
      return;
    case "username":
      draft.userName = text(value, "userName");
      if (!draft.userName) throw badRequest("userName must not be empty");
      return;
    case "name.givenname":
      draft.firstName = text(value, "name.givenName");
      return;
    case "name.familyname":
      draft.lastName = text(value, "name.familyName");
      return;
    case "name":
      if (typeof value !== "object" || value === null) throw badRequest("name must be an object");
      for (const [key, inner] of Object.entries(value)) setAttribute(draft, `name.${key}`, inner);
      return;
  }
};

export const patchScimUser = async (ctx: ScimContext, id: string, input: unknown) => {
  const operations = patchOperationsOf(input);
  return applyDraft(ctx, id, (row) => {
    const draft: UserDraft = {
      userName: row.external_id ?? row.email,
      firstName: row.first_name,
      lastName: row.last_name,
      active: row.is_active,
    };
    for (const { op, path, value } of operations) {
      if (op === "remove") {
        if (!path) throw badRequest("A remove operation needs a path", "noTarget");
        const target = path.toLowerCase();
        if (target === "name.givenname") draft.firstName = "";
        if (target === "name.familyname") draft.lastName = "";
      } else if (path) {
        setAttribute(draft, path, value);
      } else {
        if (typeof value !== "object" || value === null || Array.isArray(value)) {
          throw badRequest("An operation without a path needs an object value", "invalidSyntax");
        }
        for (const [key, inner] of Object.entries(value)) setAttribute(draft, key, inner);
      }
    }
    return draft;
  });
};

export const deleteScimUser = async (ctx: ScimContext, id: string) => {
  await inTransaction(ctx.deps.db, async (trx) => {
    const row = await requireMember(ctx, id, trx);
    const member = { orgId: ctx.orgId, membershipId: row.id, userId: row.user_id! };
    await removeMember(ctx.deps, trx, member, ALIAS);
    await record(ctx, trx, "scim-deprovision-user", { membershipId: row.id, userId: member.userId, email: row.email });
  });
  return {};
};
