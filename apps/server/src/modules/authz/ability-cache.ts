import { createBoundedCache } from "../../lib/bounded-cache";
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

export type AbilityCache = {
  get: (identityId: string, projectId: string) => CachedAbility | undefined;
  set: (identityId: string, projectId: string, entry: CachedAbility) => void;
  delete: (identityId: string, projectId: string) => void;
  clear: () => void;
  size: () => number;
};

/** Project slug to id, so slug-addressed requests can name the cached version they hold. */
export type ProjectIdCache = {
  get: (orgId: string, slug: string) => string | undefined;
  set: (orgId: string, slug: string, projectId: string) => void;
  size: () => number;
};

const keyOf = (a: string, b: string) => `${a}:${b}`;

/**
 * Bounded, least recently written evicted first: a hit on this per-request path moves nothing.
 * (Its entries end by the permission version and `validUntil`, checked by the caller, not by age.)
 */
export const createAbilityCache = (maxEntries = 10_000): AbilityCache => {
  const entries = createBoundedCache<CachedAbility>({ maxEntries, recency: "write" });
  return {
    get: (identityId, projectId) => entries.get(keyOf(identityId, projectId)),
    set: (identityId, projectId, entry) => entries.set(keyOf(identityId, projectId), entry),
    delete: (identityId, projectId) => entries.delete(keyOf(identityId, projectId)),
    clear: () => entries.clear(),
    size: () => entries.size(),
  };
};

/** Bounded like the ability cache it serves, least recently written evicted first. */
export const createProjectIdCache = (maxEntries = 10_000): ProjectIdCache => {
  const slugs = createBoundedCache<string>({ maxEntries, recency: "write" });
  return {
    get: (orgId, slug) => slugs.get(keyOf(orgId, slug)),
    set: (orgId, slug, projectId) => slugs.set(keyOf(orgId, slug), projectId),
    size: () => slugs.size(),
  };
};
