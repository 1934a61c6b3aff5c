import {
  DEFAULT_PROJECT_TEMPLATE_ID,
  DEFAULT_PROJECT_TEMPLATE_NAME,
  type ProjectTemplate,
  type ProjectType,
} from "@keyward/contract";
import { toIso } from "../../lib/dates";
import { PROJECT_ROLE_NAMES, PROJECT_ROLE_RULES } from "../../permissions";
import { DEFAULT_ENVIRONMENTS } from "../projects/project.service";
import type { TemplateMembers, TemplateRow } from "./project-template.repository";

/** Built-in roles come first in every template's `roles`, as in the reference. */
const predefinedRoles = (): ProjectTemplate["roles"] =>
  Object.entries(PROJECT_ROLE_RULES).map(([slug, rules]) => ({
    name: PROJECT_ROLE_NAMES[slug] ?? slug,
    slug,
    permissions: rules.map((r) => ({
      subject: r.subject,
      action: [...r.action],
      inverted: r.inverted,
      ...(r.conditions ? { conditions: r.conditions } : {}),
    })),
  }));

export const toTemplateDto = (row: TemplateRow, members: TemplateMembers): ProjectTemplate => {
  const own = <T extends { template_id: string }>(list: T[]) => list.filter((m) => m.template_id === row.id);
  const pmi = row.project_managed_identities;
  return {
    id: row.id,
    orgId: row.org_id,
    name: row.name,
    description: row.description,
    type: row.type as ProjectType,
    roles: [...predefinedRoles(), ...row.roles],
    environments: row.environments,
    users: own(members.users).map((u) => ({ username: u.username, roles: u.roles })),
    groups: own(members.groups).map((g) => ({ groupSlug: g.slug, roles: g.roles })),
    identities: own(members.identities).map((i) => ({
      identityId: i.identity_id,
      identityName: i.name,
      roles: i.roles,
    })),
    projectManagedIdentities: pmi && pmi.length > 0 ? pmi : null,
    createdAt: toIso(row.created_at),
    updatedAt: toIso(row.updated_at),
  };
};

/** The synthetic built-in template of a type: never stored, listed first. */
export const defaultTemplate = (orgId: string, type: ProjectType): ProjectTemplate => {
  const now = new Date().toISOString();
  return {
    id: DEFAULT_PROJECT_TEMPLATE_ID,
    orgId,
    name: DEFAULT_PROJECT_TEMPLATE_NAME,
    description: `Keyward's ${type} default project template`,
    type,
    roles: predefinedRoles(),
    environments: type === "secret-manager" ? DEFAULT_ENVIRONMENTS : null,
    users: null,
    groups: null,
    identities: null,
    projectManagedIdentities: null,
    createdAt: now,
    updatedAt: now,
  };
};
