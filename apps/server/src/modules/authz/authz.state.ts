import { createAbilityCache, createProjectIdCache, type AbilityCache, type ProjectIdCache } from "./ability-cache";

declare module "../../context" {
  interface AppDeps {
    /** Built abilities by the fingerprint of their grants, and per (holder, project) which one and at which permission version. */
    abilityCache: AbilityCache;
    projectIdCache: ProjectIdCache;
  }
}

export const createAuthzState = (maxAbilities?: number, maxProjectAccess?: number) => ({
  abilityCache: createAbilityCache(maxAbilities, maxProjectAccess),
  projectIdCache: createProjectIdCache(maxAbilities),
});
