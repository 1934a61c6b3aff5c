import { sql } from "kysely";
import type { Database } from "../../db/database";
import type { Tx } from "../../db/transaction";
import type { StoredLoginMapping } from "../../db/tables/ssh";

const CA_COLUMNS = [
  "c.id",
  "c.project_id",
  "c.friendly_name",
  "c.status",
  "c.key_algorithm",
  "c.key_source",
  "c.public_key",
  "c.krl_version",
  "c.created_at",
  "c.updated_at",
] as const;

export type CaRow = {
  id: string;
  project_id: string;
  friendly_name: string;
  status: string;
  key_algorithm: string;
  key_source: string;
  public_key: string;
  krl_version: string;
  created_at: Date;
  updated_at: Date;
};

/** A CA with its project's organization (callers compare it with the caller's). */
export const findCa = (db: Database, id: string) =>
  db
    .selectFrom("ssh_cas as c")
    .innerJoin("projects as p", "p.id", "c.project_id")
    .select([...CA_COLUMNS, "p.org_id"])
    .where("c.id", "=", id)
    .executeTakeFirst();

/** What signing with a CA needs: its state, public key line and sealed private key, in one read. */
export const findCaSigningKey = (db: Database | Tx, id: string) =>
  db
    .selectFrom("ssh_cas")
    .select(["id", "status", "public_key", "encrypted_private_key"])
    .where("id", "=", id)
    .executeTakeFirst();

export const listProjectCas = (db: Database, projectId: string) =>
  db
    .selectFrom("ssh_cas as c")
    .select(CA_COLUMNS)
    .where("c.project_id", "=", projectId)
    .orderBy("c.created_at")
    .execute();

export const insertCa = (
  trx: Tx,
  row: {
    id: string;
    project_id: string;
    friendly_name: string;
    key_algorithm: string;
    public_key: string;
    encrypted_private_key: string;
  },
) => trx.insertInto("ssh_cas").values(row).returning(["id"]).executeTakeFirstOrThrow();

export const updateCaRow = (db: Database, id: string, change: { friendly_name?: string; status?: string }) =>
  db
    .updateTable("ssh_cas")
    .set({ ...change, updated_at: sql`now()` })
    .where("id", "=", id)
    .executeTakeFirst();

export const deleteCaRow = (db: Database, id: string) => db.deleteFrom("ssh_cas").where("id", "=", id).execute();

/** A project's default user and host CAs, locked for the caller's transaction (created empty when missing). */
export const lockProjectSshConfig = async (trx: Tx, projectId: string) => {
  await trx
    .insertInto("project_ssh_configs")
    .values({ project_id: projectId, default_user_ssh_ca_id: null, default_host_ssh_ca_id: null })
    .onConflict((oc) => oc.column("project_id").doNothing())
    .execute();
  return trx
    .selectFrom("project_ssh_configs")
    .selectAll()
    .where("project_id", "=", projectId)
    .forUpdate()
    .executeTakeFirstOrThrow();
};

export const setProjectSshDefaults = (trx: Tx, projectId: string, userCaId: string, hostCaId: string) =>
  trx
    .updateTable("project_ssh_configs")
    .set({ default_user_ssh_ca_id: userCaId, default_host_ssh_ca_id: hostCaId })
    .where("project_id", "=", projectId)
    .execute();

const TEMPLATE_COLUMNS = [
  "t.id",
  "t.ssh_ca_id",
  "t.project_id",
  "t.name",
  "t.status",
  "t.ttl",
  "t.max_ttl",
  "t.allowed_users",
  "t.allowed_hosts",
  "t.allow_user_certificates",
  "t.allow_host_certificates",
  "t.allow_custom_key_ids",
] as const;

export const findTemplate = (db: Database, id: string) =>
  db
    .selectFrom("ssh_certificate_templates as t")
    .innerJoin("projects as p", "p.id", "t.project_id")
    .select([...TEMPLATE_COLUMNS, "p.org_id"])
    .where("t.id", "=", id)
    .executeTakeFirst();

export type TemplateRow = NonNullable<Awaited<ReturnType<typeof findTemplate>>>;

export const listTemplates = (db: Database, by: { projectId: string } | { caId: string }) =>
  db
    .selectFrom("ssh_certificate_templates as t")
    .select(TEMPLATE_COLUMNS)
    .where("projectId" in by ? "t.project_id" : "t.ssh_ca_id", "=", "projectId" in by ? by.projectId : by.caId)
    .orderBy("t.name")
    .execute();

type TemplateValues = {
  name: string;
  ttl: string;
  max_ttl: string;
  allowed_users: string[];
  allowed_hosts: string[];
  allow_user_certificates: boolean;
  allow_host_certificates: boolean;
  allow_custom_key_ids: boolean;
};

export const insertTemplate = (db: Database, row: TemplateValues & { ssh_ca_id: string; project_id: string }) =>
  db
    .insertInto("ssh_certificate_templates")
    .values({
      ...row,
      allowed_users: JSON.stringify(row.allowed_users),
      allowed_hosts: JSON.stringify(row.allowed_hosts),
    })
    .returning(["id"])
    .executeTakeFirstOrThrow();

export const updateTemplateRow = (
  db: Database,
  id: string,
  { allowed_users, allowed_hosts, ...change }: Partial<TemplateValues> & { status?: string },
) =>
  db
    .updateTable("ssh_certificate_templates")
    .set({
      ...change,
      ...(allowed_users ? { allowed_users: JSON.stringify(allowed_users) } : {}),
      ...(allowed_hosts ? { allowed_hosts: JSON.stringify(allowed_hosts) } : {}),
      updated_at: sql`now()`,
    })
    .where("id", "=", id)
    .execute();

export const deleteTemplateRow = (db: Database, id: string) =>
  db.deleteFrom("ssh_certificate_templates").where("id", "=", id).execute();

const HOST_COLUMNS = [
  "h.id",
  "h.project_id",
  "h.hostname",
  "h.alias",
  "h.user_cert_ttl",
  "h.host_cert_ttl",
  "h.user_ssh_ca_id",
  "h.host_ssh_ca_id",
  "h.login_mappings",
] as const;

export const findHost = (db: Database, id: string) =>
  db
    .selectFrom("ssh_hosts as h")
    .innerJoin("projects as p", "p.id", "h.project_id")
    .select([...HOST_COLUMNS, "p.org_id"])
    .where("h.id", "=", id)
    .executeTakeFirst();

export type HostRow = NonNullable<Awaited<ReturnType<typeof findHost>>>;

export const listProjectHosts = (db: Database, projectId: string) =>
  db
    .selectFrom("ssh_hosts as h")
    .select(HOST_COLUMNS)
    .where("h.project_id", "=", projectId)
    .orderBy("h.hostname")
    .execute();

/** The hosts of the given projects, by hostname, at most `limit`. */
export const listHostsOfProjects = (db: Database, projectIds: readonly string[], limit: number) =>
  projectIds.length === 0
    ? Promise.resolve([])
    : db
        .selectFrom("ssh_hosts as h")
        .select(HOST_COLUMNS)
        .where("h.project_id", "in", [...projectIds])
        .orderBy("h.hostname")
        .orderBy("h.id")
        .limit(limit)
        .execute();

type HostValues = {
  hostname: string;
  alias: string;
  user_cert_ttl: string;
  host_cert_ttl: string;
  login_mappings: StoredLoginMapping[];
};

export const insertHost = (
  trx: Tx,
  row: HostValues & { project_id: string; user_ssh_ca_id: string; host_ssh_ca_id: string },
) =>
  trx
    .insertInto("ssh_hosts")
    .values({ ...row, login_mappings: JSON.stringify(row.login_mappings) })
    .returning(["id"])
    .executeTakeFirstOrThrow();

export const updateHostRow = (db: Database, id: string, { login_mappings, ...change }: Partial<HostValues>) =>
  db
    .updateTable("ssh_hosts")
    .set({
      ...change,
      ...(login_mappings ? { login_mappings: JSON.stringify(login_mappings) } : {}),
      updated_at: sql`now()`,
    })
    .where("id", "=", id)
    .execute();

export const deleteHostRow = (db: Database, id: string) => db.deleteFrom("ssh_hosts").where("id", "=", id).execute();
