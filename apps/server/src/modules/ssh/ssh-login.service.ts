import { parseDuration } from "@keyward/contract";
import type { RequestContext } from "../../context";
import { BadRequestError, NotFoundError, UnauthorizedError } from "../../errors";
import { groupSlugsOf, principalNames, projectIdsOf } from "../authz/principals";
import { requireHost } from "./ssh-access";
import { activeSigningKey } from "./ssh-ca.service";
import { listHostsOfProjects } from "./ssh-ca.repository";
import type { StoredLoginMapping } from "../../db/tables/ssh";
import { groupMappingsOfHosts } from "./ssh-host-group.repository";
import { hostDto } from "./ssh-host.service";
import { isPrincipal } from "./ssh-principals";
import { signAndRecord } from "./ssh-sign.service";
import { generateSshKeyPairAsync, opensshPrivateKey, parsePublicKeyLine } from "./wire";

/** How many hosts one answer of `GET /api/v1/ssh/hosts` lists at most (by hostname). */
export const MAX_LOGIN_HOSTS = 1_000;

/** Who a person is on a host's login mappings: their username and the slugs of their groups in the org. */
const loginNamesOf = async (ctx: RequestContext) => {
  if (ctx.actor.type !== "user")
    throw new BadRequestError("Only people signed in through single sign-on log in to SSH hosts");
  const holder = { type: "user" as const, id: ctx.actor.id };
  const [names, groups] = await Promise.all([
    principalNames(ctx.deps.db, [holder]),
    groupSlugsOf(ctx.deps.db, ctx.actor.orgId, holder),
  ]);
  const username = names.get(`user:${holder.id}`)?.name;
  if (!username) throw new NotFoundError("User not found");
  return { username, groups: new Set(groups) };
};

type LoginNames = Awaited<ReturnType<typeof loginNamesOf>>;

/** The login mappings that admit the person: by username (without regard to case) or a group's slug. */
const admitting = (mappings: readonly StoredLoginMapping[], who: LoginNames) => {
  const name = who.username.toLowerCase();
  return mappings.filter(
    (m) => m.usernames.some((u) => u.toLowerCase() === name) || m.groups.some((g) => who.groups.has(g)),
  );
};

/**
 * GET /api/v1/ssh/hosts: the hosts of the person's projects (a member directly or through a group)
 * they may log in to, each with only the mappings that admit them — another person's entry is not theirs to see.
 */
export const listLoginHosts = async (ctx: RequestContext) => {
  const who = await loginNamesOf(ctx);
  const projects = await projectIdsOf(ctx.deps.db, ctx.actor.orgId, { type: "user", id: ctx.actor.id });
  const rows = await listHostsOfProjects(ctx.deps.db, projects, MAX_LOGIN_HOSTS);
  const fromGroups = await groupMappingsOfHosts(
    ctx.deps.db,
    rows.map((r) => r.id),
  );
  return rows.flatMap((row) => {
    const own = admitting(row.login_mappings, who);
    const shared = admitting(fromGroups.get(row.id) ?? [], who);
    return own.length + shared.length === 0 ? [] : [hostDto({ ...row, login_mappings: own }, shared)];
  });
};

/**
 * POST /api/v1/ssh/hosts/:id/issue-user-cert: a fresh ED25519 key and a certificate from the host's
 * user CA for `loginUser`, when one of the host's mappings admits the person as that user. The
 * principals are the person's username, when it is one sshd can compare (an e-mail address is not:
 * the key id `user-<id>` names the person), and the login user.
 */
export const issueUserCertificate = async (ctx: RequestContext, id: string, loginUser: string) => {
  const who = await loginNamesOf(ctx);
  const { row } = await requireHost(ctx, id, "");
  const mappings = [...row.login_mappings, ...((await groupMappingsOfHosts(ctx.deps.db, [row.id])).get(row.id) ?? [])];
  if (!admitting(mappings, who).some((m) => m.loginUser === loginUser))
    throw new UnauthorizedError(`You are not allowed to login as ${loginUser} on this host`);
  const principals = [...new Set([...(isPrincipal(who.username) ? [who.username] : []), loginUser])];
  const ttlMs = parseDuration(row.user_cert_ttl)!;
  const keyId = `user-${ctx.actor.id}`;
  const pair = await generateSshKeyPairAsync("ED25519");
  const signed = await signAndRecord(ctx, {
    ca: await activeSigningKey(ctx, row.user_ssh_ca_id),
    projectId: row.project_id,
    subject: parsePublicKeyLine(pair.publicKeyLine),
    certType: "user",
    principals,
    keyId,
    ttlMs,
    templateId: null,
    hostId: row.id,
    audit: (serialNumber, certificateId) => ({
      sshHostId: row.id,
      hostname: row.hostname,
      loginUser,
      principals,
      ttl: String(Math.floor(ttlMs / 1000)),
      serialNumber,
      certificateId,
    }),
  });
  return {
    ...signed,
    privateKey: opensshPrivateKey(pair.privateKey, keyId),
    publicKey: pair.publicKeyLine,
    keyAlgorithm: "ED25519" as const,
  };
};
