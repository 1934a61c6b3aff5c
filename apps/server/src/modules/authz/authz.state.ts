import { createAbilityCache, createProjectIdCache, type AbilityCache, type ProjectIdCache } from "./ability-cache";

declare module "../../context" {
  interface AppDeps {
    /** Built abilities per (identity, project), keyed by the project's permission version. */
    abilityCache: AbilityCache;
    projectIdCache: ProjectIdCache;
  }
}

export const createAuthzState = (maxAbilities?: number) => ({
  abilityCache: createAbilityCache(maxAbilities),
  projectIdCache: createProjectIdCache(maxAbilities),
});
