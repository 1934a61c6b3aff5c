import { inTransaction, type Tx } from "../../db/transaction";
import { parseDuration } from "@keyward/contract";
import { noteAudit, type RequestContext } from "../../context";
import { isUniqueViolation, isUuid } from "../../db/errors";
import { BadRequestError } from "../../errors";
import type { StoredLoginMapping } from "../../db/tables/ssh";
import { assertCan } from "../authz/guard";
import { requireHost, sshProject } from "./ssh-access";
import { activeSigningKey, createCaRow } from "./ssh-ca.service";
import {
  deleteHostRow,
  findCa,
  findHost,
  insertHost,
  listProjectHosts,
  lockProjectSshConfig,
  setProjectSshDefaults,
  updateHostRow,
  type HostRow,
} from "./ssh-ca.repository";
import { groupMappingsOfHosts } from "./ssh-host-group.repository";
import { signAndRecord, subjectOf } from "./ssh-sign.service";

export type LoginMappingInput = {
  loginUser: string;
  allowedPrincipals: { usernames?: string[]; groups?: string[] };
};

export const stored = (mappings: readonly LoginMappingInput[]): StoredLoginMapping[] =>
  mappings.map((m) => ({
    loginUser: m.loginUser,
    usernames: [...new Set(m.allowedPrincipals.usernames ?? [])],
    groups: [...new Set(m.allowedPrincipals.groups ?? [])],
  }));

/** A stored mapping as the API shows it, saying whether it is the host's own or a group's. */
export const mappingDto = (m: StoredLoginMapping, source: "host" | "hostGroup") => ({
  loginUser: m.loginUser,
  allowedPrincipals: { usernames: m.usernames, groups: m.groups },
  source,
});

/** A host as the API shows it: its own login mappings, then those of its groups. */
export const hostDto = (row: Omit<HostRow, "org_id">, fromGroups: readonly StoredLoginMapping[] = []) => ({
  id: row.id,
  projectId: row.project_id,
  hostname: row.hostname,
  alias: row.alias,
  userCertTtl: row.user_cert_ttl,
  hostCertTtl: row.host_cert_ttl,
  userSshCaId: row.user_ssh_ca_id,
  hostSshCaId: row.host_ssh_ca_id,
  loginMappings: [
    ...row.login_mappings.map((m) => mappingDto(m, "host")),
    ...fromGroups.map((m) => mappingDto(m, "hostGroup")),
  ],
});

/** Hosts as the API shows them, with their groups' mappings (one query for all of them). */
export const hostDtos = async (ctx: RequestContext, rows: readonly Omit<HostRow, "org_id">[]) => {
  const fromGroups = await groupMappingsOfHosts(
    ctx.deps.db,
    rows.map((r) => r.id),
  );
  return rows.map((row) => hostDto(row, fromGroups.get(row.id)));
};

const oneHostDto = async (ctx: RequestContext, row: Omit<HostRow, "org_id">) => (await hostDtos(ctx, [row]))[0]!;

const hostnameTaken = (hostname: string) => (error: unknown) => {
  if (isUniqueViolation(error)) throw new BadRequestError(`SSH host with hostname ${hostname} already exists`);
  throw error;
};

/**
 * The CAs a new host uses: the ones named (which must be the project's), else the project's defaults —
 * the first host of a project creates them ("User CA" and "Host CA", ED25519) under the config's lock.
 */
const casFor = async (
  ctx: RequestContext,
  trx: Tx,
  projectId: string,
  named: { userSshCaId?: string; hostSshCaId?: string },
) => {
  const check = async (id: string, which: "User" | "Host") => {
    const ca = isUuid(id) ? await findCa(trx, id) : undefined;
    if (!ca || ca.project_id !== projectId)
      throw new BadRequestError(`${which} SSH CA with ID '${id}' not found in project '${projectId}'`);
    return id;
  };
  if (named.userSshCaId && named.hostSshCaId)
    return { user: await check(named.userSshCaId, "User"), host: await check(named.hostSshCaId, "Host") };
  const config = await lockProjectSshConfig(trx, projectId);
  let user = config.default_user_ssh_ca_id;
  let host = config.default_host_ssh_ca_id;
  if (!user || !host) {
    user ??= await createCaRow(ctx, trx, projectId, "User CA", "ED25519");
    host ??= await createCaRow(ctx, trx, projectId, "Host CA", "ED25519");
    await setProjectSshDefaults(trx, projectId, user, host);
  }
  return {
    user: named.userSshCaId ? await check(named.userSshCaId, "User") : user,
    host: named.hostSshCaId ? await check(named.hostSshCaId, "Host") : host,
  };
};

type HostBody = {
  hostname: string;
  alias: string;
  userCertTtl: string;
  hostCertTtl: string;
  loginMappings: LoginMappingInput[];
};

export const createSshHost = async (
  ctx: RequestContext,
  body: HostBody & { projectId: string; userSshCaId?: string; hostSshCaId?: string },
) => {
  const { ability, project } = await sshProject(ctx, body.projectId);
  assertCan(ability, "create", "ssh-hosts", { hostname: body.hostname });
  const id = await inTransaction(ctx, async (trx) => {
    const cas = await casFor(ctx, trx, project.id, body);
    const created = await insertHost(trx, {
      project_id: project.id,
      hostname: body.hostname,
      alias: body.alias,
      user_cert_ttl: body.userCertTtl,
      host_cert_ttl: body.hostCertTtl,
      login_mappings: stored(body.loginMappings),
      user_ssh_ca_id: cas.user,
      host_ssh_ca_id: cas.host,
    });
    noteAudit(ctx, {
      metadata: {
        sshHostId: created.id,
        hostname: body.hostname,
        alias: body.alias,
        userSshCaId: cas.user,
        hostSshCaId: cas.host,
      },
    });
    return created.id;
  }).catch(hostnameTaken(body.hostname));
  return oneHostDto(ctx, (await findHost(ctx.deps.db, id))!);
};

export const getSshHost = async (ctx: RequestContext, id: string) => {
  const { row } = await requireHost(ctx, id, "read");
  noteAudit(ctx, { metadata: { sshHostId: row.id, hostname: row.hostname } });
  return oneHostDto(ctx, row);
};

export const updateSshHost = async (ctx: RequestContext, id: string, body: Partial<HostBody>) => {
  const { row, ability } = await requireHost(ctx, id, "edit");
  if (body.hostname) assertCan(ability, "edit", "ssh-hosts", { hostname: body.hostname });
  await inTransaction(ctx, async (trx) => {
    await updateHostRow(trx, row.id, {
      hostname: body.hostname,
      alias: body.alias,
      user_cert_ttl: body.userCertTtl,
      host_cert_ttl: body.hostCertTtl,
      ...(body.loginMappings ? { login_mappings: stored(body.loginMappings) } : {}),
    });
    noteAudit(ctx, { metadata: { sshHostId: row.id, hostname: body.hostname ?? row.hostname } });
  }).catch(hostnameTaken(body.hostname ?? row.hostname));
  return oneHostDto(ctx, (await findHost(ctx.deps.db, row.id))!);
};

export const deleteSshHost = async (ctx: RequestContext, id: string) => {
  const { row } = await requireHost(ctx, id, "delete");
  const answer = await oneHostDto(ctx, row);
  await inTransaction(ctx, async (trx) => {
    await deleteHostRow(trx, row.id);
    noteAudit(ctx, { metadata: { sshHostId: row.id, hostname: row.hostname } });
  });
  return answer;
};

export const listSshHosts = async (ctx: RequestContext, projectId: string) => {
  const { ability, project } = await sshProject(ctx, projectId);
  assertCan(ability, "read", "ssh-hosts");
  const rows = await listProjectHosts(ctx.deps.db, project.id);
  return {
    hosts: await hostDtos(
      ctx,
      rows.filter((r) => ability.can("read", "ssh-hosts", { hostname: r.hostname })),
    ),
  };
};

/** POST /api/v1/ssh/hosts/:id/issue-host-cert: the host's own key signed by its host CA, for its hostname. */
export const issueHostCertificate = async (ctx: RequestContext, id: string, publicKey: string) => {
  const { row } = await requireHost(ctx, id, "issue-host-cert");
  const subject = subjectOf(publicKey);
  const ttlMs = parseDuration(row.host_cert_ttl)!;
  return signAndRecord(ctx, {
    ca: await activeSigningKey(ctx, row.host_ssh_ca_id),
    projectId: row.project_id,
    subject,
    certType: "host",
    principals: [row.hostname],
    keyId: `host-${row.id}`,
    ttlMs,
    templateId: null,
    hostId: row.id,
    audit: (serialNumber) => ({
      sshHostId: row.id,
      hostname: row.hostname,
      principals: [row.hostname],
      serialNumber,
      ttl: String(Math.floor(ttlMs / 1000)),
    }),
  });
};
