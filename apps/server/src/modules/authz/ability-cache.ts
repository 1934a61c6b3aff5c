import { createBoundedCache } from "../../lib/bounded-cache";
import type { Ability } from "../../permissions";
import type { Grant } from "./grants";

/**
 * A built ability, shared by every (identity or person, project) whose grants are the same: the
 * same roles, group roles and additional privileges with the same windows, and, where their rules
 * use identity templates, the same values filled in. Rebuilt locally once a temporary grant starts
 * or ends (`validUntil`).
 */
export type SharedAbility = { grants: readonly Grant[]; ability: Ability; validUntil: number };

/**
 * What one (identity or person, project) holds, valid while the project's permission version is the
 * one it was read at. Every change that feeds an ability bumps the version in its own transaction,
 * and the version is read on every request, so a change is seen on the very next request, on every
 * instance. The ability itself is looked up by `abilityKey` (the fingerprint of the grants): an
 * entry is a few hundred bytes, and an evicted ability is a miss, never kept alive by its holders.
 */
export type CachedAccess = {
  version: string;
  membershipId: string;
  abilityKey: string;
  /** Set when the rules were filled in from this token's login (`identity.auth` templates). */
  tokenId?: string;
};

export type AbilityCache = {
  get: (holderId: string, projectId: string) => CachedAccess | undefined;
  set: (holderId: string, projectId: string, entry: CachedAccess) => void;
  delete: (holderId: string, projectId: string) => void;
  getAbility: (abilityKey: string) => SharedAbility | undefined;
  setAbility: (abilityKey: string, ability: SharedAbility) => void;
  /** (holder, project) entries held. */
  size: () => number;
  /** Built abilities held. */
  abilities: () => number;
};

/** Project slug to id, so slug-addressed requests can name the cached version they hold. */
export type ProjectIdCache = {
  get: (orgId: string, slug: string) => string | undefined;
  set: (orgId: string, slug: string, projectId: string) => void;
  size: () => number;
};

const keyOf = (a: string, b: string) => `${a}:${b}`;

/**
 * Two bounds: `maxAbilities` built abilities (the large part: a rule index with compiled
 * conditions each) and `maxHolders` small (holder, project) entries naming one. Both evict the least
 * recently written first: a hit on this per-request path moves nothing. (Entries end by the
 * permission version and `validUntil`, checked by the caller, not by age.)
 */
export const createAbilityCache = (maxAbilities = 10_000, maxHolders = 200_000): AbilityCache => {
  const holders = createBoundedCache<CachedAccess>({ maxEntries: maxHolders, recency: "write" });
  const abilities = createBoundedCache<SharedAbility>({ maxEntries: maxAbilities, recency: "write" });
  return {
    get: (holderId, projectId) => holders.get(keyOf(holderId, projectId)),
    set: (holderId, projectId, entry) => holders.set(keyOf(holderId, projectId), entry),
    delete: (holderId, projectId) => holders.delete(keyOf(holderId, projectId)),
    getAbility: (abilityKey) => abilities.get(abilityKey),
    setAbility: (abilityKey, ability) => abilities.set(abilityKey, ability),
    size: () => holders.size(),
    abilities: () => abilities.size(),
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
