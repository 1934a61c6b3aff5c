import type { Database } from "../../db/database";
import {
  findGroupIdsOfHolder,
  findGroupSlugsOfHolder,
  findOrgPeopleByNames,
  findPrincipalNames,
  findProjectIdsOfHolder,
  findProjectMembersAmong,
  type Holder,
  type OrgPersonRow,
  type PrincipalRef,
} from "./principals.repository";

export type { Holder, OrgPersonRow, PrincipalRef, PrincipalType } from "./principals.repository";

/**
 * Who is who, for the modules that name people, identities and groups: the functions they call
 * (rather than authz's repository).
 */

/** A principal's key in the sets and maps below. */
export const principalKey = (p: { type: string; id: string }) => `${p.type}:${p.id}`;

/** The projects of an organization a holder belongs to, directly or through a group. */
export const projectIdsOf = (db: Database, orgId: string, holder: Holder) => findProjectIdsOfHolder(db, orgId, holder);

/** Whether two holders are the same person or identity. */
export const sameHolder = (a: Holder, b: { type: string; id: string }) => a.type === b.type && a.id === b.id;

/**
 * People of an organization by username or e-mail, without regard to case, by the name as given:
 * a name that names nobody in the organization is missing from the map.
 */
export const orgPeopleByNames = async (db: Database, orgId: string, names: readonly string[]) => {
  const found = await findOrgPeopleByNames(db, orgId, names);
  const byName = new Map<string, OrgPersonRow>();
  for (const name of names) {
    const wanted = name.toLowerCase();
    const person =
      found.find((p) => p.username.toLowerCase() === wanted) ?? found.find((p) => p.email.toLowerCase() === wanted);
    if (person) byName.set(name, person);
  }
  return byName;
};

/** The people of an organization any of these names (usernames or e-mails, without regard to case) name. */
export const orgPeopleAmong = (db: Database, orgId: string, names: readonly string[]) =>
  findOrgPeopleByNames(db, orgId, names);

/** One person of an organization by username or e-mail, without regard to case. */
export const orgPersonByName = async (db: Database, orgId: string, name: string) =>
  (await orgPeopleByNames(db, orgId, [name])).get(name);

/** The groups a person or an identity belongs to. */
export const groupIdsOf = (db: Database, holder: Holder) => findGroupIdsOfHolder(db, holder);

/** The slugs of the organization's groups a holder belongs to. */
export const groupSlugsOf = (db: Database, orgId: string, holder: Holder) => findGroupSlugsOfHolder(db, orgId, holder);

/** The project's members among the principals, as `type:id` keys (a person or identity directly or through a group). */
export const projectMembersAmong = (db: Database, projectId: string, principals: readonly PrincipalRef[]) =>
  findProjectMembersAmong(db, projectId, principals);

/** What the principals are called, by `type:id`. */
export const principalNames = (db: Database, principals: readonly PrincipalRef[]) => findPrincipalNames(db, principals);

/** Is the holder one of the principals, directly or through one of its groups? */
export const isAmong = (principals: readonly PrincipalRef[], holder: Holder, groupIds: readonly string[]) =>
  principals.some((p) => sameHolder(holder, p) || (p.type === "group" && groupIds.includes(p.id)));
