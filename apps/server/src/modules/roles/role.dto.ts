import { createHash } from "node:crypto";
import type { ProjectRole } from "@keyward/contract";
import { toIso } from "../../lib/dates";
import { PROJECT_ROLE_NAMES, PROJECT_ROLE_RULES, type PermissionRule } from "../../permissions";
import type { ProjectRow } from "../authz/project-access";
import type { RoleRow } from "./roles.repository";

/** Rules leave the server unpacked: `conditions` only when set. */
export const toRuleDtos = (rules: readonly PermissionRule[]) =>
  rules.map((rule) => ({
    subject: rule.subject,
    action: [...rule.action],
    inverted: rule.inverted,
    ...(rule.conditions ? { conditions: rule.conditions } : {}),
  }));

export const toRoleDto = (row: RoleRow): ProjectRole => ({
  id: row.id,
  name: row.name,
  slug: row.slug,
  description: row.description,
  projectId: row.project_id,
  permissions: toRuleDtos(row.permissions as PermissionRule[]),
  createdAt: toIso(row.created_at),
  updatedAt: toIso(row.updated_at),
});

const BUILT_IN_DESCRIPTIONS: Record<string, string> = {
  admin: "Full administrative access over a project",
  member: "Limited read/write role in a project",
  viewer: "Only read role in a project",
  "no-access": "No access to any resources in the project",
};

/** A stable UUID-shaped id per project and built-in slug, so built-in roles list like custom ones. */
const builtInRoleId = (projectId: string, slug: string) => {
  const hex = createHash("sha256").update(`${projectId}:${slug}`).digest("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
};

export const builtInRoleDto = (project: ProjectRow, slug: string): ProjectRole => ({
  id: builtInRoleId(project.id, slug),
  name: PROJECT_ROLE_NAMES[slug] ?? slug,
  slug,
  description: BUILT_IN_DESCRIPTIONS[slug] ?? null,
  projectId: project.id,
  permissions: toRuleDtos(PROJECT_ROLE_RULES[slug] ?? []),
  createdAt: toIso(project.created_at),
  updatedAt: toIso(project.updated_at),
});
