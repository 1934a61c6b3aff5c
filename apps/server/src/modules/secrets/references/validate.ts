import { BadRequestError } from "../../../errors";
import type { Ability } from "../../../permissions";
import { assertCanDescribe, secretObject } from "../secret-access";
import { referencesIn, type Reference } from "./reference-syntax";

/** What validation needs of the place a referenced secret would be in. */
export type ReferenceTargets = {
  /** Slugs of the project's environments among those asked for. */
  environments: (slugs: string[]) => Promise<Set<string>>;
  /** Keys (with tag slugs) of a folder, or undefined when the folder does not exist. */
  folderKeys: (environment: string, secretPath: string) => Promise<Map<string, string[]> | undefined>;
};

/**
 * Every reference in new values must name an existing environment, folder and secret (reference
 * §7.4: 400s), and the writer must be able to describe each referenced secret (403). `pending` are
 * keys being written in the same request to the origin folder, which count as existing.
 */
export const validateReferences = async (
  values: readonly string[],
  origin: { environment: string; secretPath: string },
  ability: Ability,
  targets: ReferenceTargets,
  pending: ReadonlySet<string> = new Set(),
) => {
  const refs: Reference[] = values.flatMap((v) => referencesIn(v, origin));
  if (refs.length === 0) return;
  const slugs = [...new Set(refs.map((r) => r.environment))];
  const known = await targets.environments(slugs);
  const missingEnvs = slugs.filter((s) => !known.has(s));
  if (missingEnvs.length > 0)
    throw new BadRequestError(`Referenced environment not found. Missing ${missingEnvs.join(",")}`);
  const missingKeys: string[] = [];
  for (const ref of refs) {
    const local = ref.environment === origin.environment && ref.secretPath === origin.secretPath;
    const keys = await targets.folderKeys(ref.environment, ref.secretPath);
    if (!keys) throw new BadRequestError(`Referenced path ${ref.secretPath} doesn't exist`);
    const tags = keys.get(ref.key);
    if (tags === undefined && !(local && pending.has(ref.key))) {
      missingKeys.push(ref.key);
      continue;
    }
    assertCanDescribe(ability, secretObject(ref.environment, ref.secretPath, ref.key, tags ?? []));
  }
  if (missingKeys.length > 0)
    throw new BadRequestError(`Referenced secret(s) not found: ${[...new Set(missingKeys)].join(",")}`);
};
