import type { Ability } from "../../permissions";
import type { Grant } from "./grants";

/**
 * Built abilities per (identity, project), valid while the project's permission version is the
 * one they were built at and until the next start or end of a temporary grant. Every change that
 * feeds an ability bumps the version in its own transaction, and the version is read on every
 * request, so a change is seen on the very next request, on every instance.
 */
export type CachedAbility = {
  version: string;
  membershipId: string;
  grants: readonly Grant[];
  ability: Ability;
  validUntil: number;
  /** Set when the rules were filled in from this token's login (`identity.auth` templates). */
  tokenId?: string;
};

const MAX_ENTRIES = 10_000;
const entries = new Map<string, CachedAbility>();
const keyOf = (identityId: string, projectId: string) => `${identityId}:${projectId}`;

export const abilityCache = {
  get: (identityId: string, projectId: string) => entries.get(keyOf(identityId, projectId)),
  set(identityId: string, projectId: string, entry: CachedAbility) {
    const key = keyOf(identityId, projectId);
    entries.delete(key);
    if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value!);
    entries.set(key, entry);
  },
  delete: (identityId: string, projectId: string) => entries.delete(keyOf(identityId, projectId)),
  clear: () => entries.clear(),
};

/** Project slug to id, so slug-addressed requests can name the cached version they hold. */
const slugs = new Map<string, string>();
export const projectIdCache = {
  get: (orgId: string, slug: string) => slugs.get(`${orgId}:${slug}`),
  set(orgId: string, slug: string, projectId: string) {
    if (slugs.size >= MAX_ENTRIES) slugs.clear();
    slugs.set(`${orgId}:${slug}`, projectId);
  },
};
