import { ForbiddenError } from "../../../errors";
import type { Ability } from "../../../permissions";
import { canReadValue, secretObject } from "../secret-access";
import type { PlainSecret } from "../secret-crypto";
import { MAX_REFERENCE_DEPTH, REFERENCE, hasReference, parseReference } from "./reference-syntax";

/** The secrets of a folder by key, or undefined when the environment or folder does not exist. */
export type FolderLoader = (environment: string, secretPath: string) => Promise<Map<string, PlainSecret> | undefined>;

type Origin = { environment: string; secretPath: string; key: string };

const idOf = (o: Origin) => `${o.environment}\u0000${o.secretPath}\u0000${o.key}`;

export const referenceForbidden = (ref: Origin, root: Origin) =>
  new ForbiddenError(
    `You do not have permission to read secret '${ref.key}' in environment '${ref.environment}' at path '${ref.secretPath}', which is referenced by secret '${root.key}' in environment '${root.environment}' at path '${root.secretPath}'.`,
    "ForbiddenReadSecretError",
  );

/** A multi-line result of a secret that skips multiline encoding reads as one quoted line (reference §7.2). */
const formatMultiline = (value: string) => `"${value.replace(/\n/g, "\\n")}"`;

/**
 * Expands `${…}` references in one secret's value (reference §7.2): depth-first up to depth 10; a
 * reference back into the chain being expanded is substituted once, unexpanded; a missing secret
 * or folder stays literal. Every referenced secret needs read-value permission, else 403. Passes
 * repeat (at most 10) only while substitution produced references not seen before.
 */
export const expandSecretValue = async (
  value: string,
  origin: Origin & { skipMultilineEncoding?: boolean },
  ability: Ability,
  load: FolderLoader,
) => {
  if (!hasReference(value)) return value;
  const seen = new Set<string>();
  const expandOnce = async (text: string, from: Origin, depth: number, chain: Set<string>): Promise<string> => {
    if (!hasReference(text)) return text;
    if (depth > MAX_REFERENCE_DEPTH) {
      // Left unexpanded for good: a later pass must not pick these up again.
      for (const match of text.matchAll(REFERENCE)) seen.add(match[0]);
      return text;
    }
    let out = "";
    let last = 0;
    for (const match of text.matchAll(REFERENCE)) {
      out += text.slice(last, match.index);
      last = match.index + match[0].length;
      seen.add(match[0]);
      const ref = parseReference(match[1]!, from);
      const folder = ref ? await load(ref.environment, ref.secretPath) : undefined;
      const target = ref ? folder?.get(ref.key) : undefined;
      if (!ref || !target) {
        out += match[0];
        continue;
      }
      const refOrigin = { environment: ref.environment, secretPath: ref.secretPath, key: ref.key };
      const tags = target.tags.map((t) => t.slug);
      if (!canReadValue(ability, secretObject(ref.environment, ref.secretPath, ref.key, tags)))
        throw referenceForbidden(refOrigin, origin);
      const id = idOf(refOrigin);
      out += chain.has(id)
        ? target.value()
        : await expandOnce(target.value(), refOrigin, depth + 1, new Set([...chain, id]));
    }
    return out + text.slice(last);
  };

  let result = value;
  for (let pass = 0; pass < MAX_REFERENCE_DEPTH; pass += 1) {
    result = await expandOnce(result, origin, 1, new Set([idOf(origin)]));
    if (![...result.matchAll(REFERENCE)].some((m) => !seen.has(m[0]))) break;
  }
  return origin.skipMultilineEncoding && result.includes("\n") ? formatMultiline(result) : result;
};
