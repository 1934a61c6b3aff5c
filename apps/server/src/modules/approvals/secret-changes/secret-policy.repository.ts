import { sql } from "kysely";
import type { Database } from "../../../db/database";
import type { Tx } from "../../../db/transaction";

const POLICY_COLUMNS = [
  "id",
  "project_id",
  "name",
  "secret_path",
  "approvals",
  "enforcement_level",
  "allowed_self_approvals",
  "bypass_for_machine_identities",
  "deleted_at",
  "created_at",
  "updated_at",
] as const;

export const findPolicy = (db: Database, policyId: string) =>
  db.selectFrom("secret_approval_policies").select(POLICY_COLUMNS).where("id", "=", policyId).executeTakeFirst();
export type PolicyRow = NonNullable<Awaited<ReturnType<typeof findPolicy>>>;

export const lockPolicy = (trx: Tx, policyId: string) =>
  trx
    .selectFrom("secret_approval_policies")
    .select(POLICY_COLUMNS)
    .where("id", "=", policyId)
    .forUpdate()
    .executeTakeFirst();

export const listLivePolicies = (db: Database, projectId: string) =>
  db
    .selectFrom("secret_approval_policies")
    .select(POLICY_COLUMNS)
    .where("project_id", "=", projectId)
    .where("deleted_at", "is", null)
    .orderBy("created_at")
    .orderBy("id")
    .execute();

/** Live policies attached to an environment, oldest first. */
export const listLivePoliciesOfEnvironment = (db: Database, projectId: string, environment: string) =>
  db
    .selectFrom("secret_approval_policies as p")
    .innerJoin("secret_approval_policy_environments as pe", "pe.policy_id", "p.id")
    .innerJoin("environments as e", "e.id", "pe.env_id")
    .select(POLICY_COLUMNS.map((c) => `p.${c}` as const))
    .where("p.project_id", "=", projectId)
    .where("e.slug", "=", environment)
    .where("p.deleted_at", "is", null)
    .orderBy("p.created_at")
    .orderBy("p.id")
    .execute();

/** Every policy of a project, retired ones too (their requests still list). */
export const listProjectPolicyIds = (db: Database, projectId: string) =>
  db.selectFrom("secret_approval_policies").select("id").where("project_id", "=", projectId).execute();

export type PolicyValues = {
  name: string;
  secret_path: string;
  approvals: number;
  enforcement_level: string;
  allowed_self_approvals: boolean;
  bypass_for_machine_identities: boolean;
};

export const insertPolicy = (trx: Tx, projectId: string, values: PolicyValues) =>
  trx
    .insertInto("secret_approval_policies")
    .values({ project_id: projectId, ...values })
    .returning(POLICY_COLUMNS)
    .executeTakeFirstOrThrow();

export const updatePolicyRow = (trx: Tx, policyId: string, values: Partial<PolicyValues>) =>
  trx
    .updateTable("secret_approval_policies")
    .set({ ...values, updated_at: sql`now()` })
    .where("id", "=", policyId)
    .returning(POLICY_COLUMNS)
    .executeTakeFirstOrThrow();

export const retirePolicyRow = (trx: Tx, policyId: string) =>
  trx
    .updateTable("secret_approval_policies")
    .set({ deleted_at: sql`now()`, updated_at: sql`now()` })
    .where("id", "=", policyId)
    .returning(POLICY_COLUMNS)
    .executeTakeFirstOrThrow();

/** Another live policy of the same environments and path. */
export const findPolicyWithScope = (
  db: Database,
  projectId: string,
  envIds: readonly string[],
  secretPath: string,
  exceptId?: string,
) => {
  let query = db
    .selectFrom("secret_approval_policies as p")
    .innerJoin("secret_approval_policy_environments as pe", "pe.policy_id", "p.id")
    .innerJoin("environments as e", "e.id", "pe.env_id")
    .select(["p.id", "e.slug"])
    .where("p.project_id", "=", projectId)
    .where("p.deleted_at", "is", null)
    .where("p.secret_path", "=", secretPath)
    .where("pe.env_id", "in", [...envIds]);
  if (exceptId !== undefined) query = query.where("p.id", "!=", exceptId);
  return query.executeTakeFirst();
};
