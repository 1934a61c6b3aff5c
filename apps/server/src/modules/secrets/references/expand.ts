import { MAX_SECRET_VALUE_BYTES } from "@keyward/contract";
import { ForbiddenError, UnprocessableEntityError } from "../../../errors";
import type { Ability } from "../../../permissions";
import { canReadValue, secretObject } from "../secret-access";
import type { PlainSecret } from "../secret-crypto";
import { MAX_REFERENCE_DEPTH, REFERENCE, hasReference, parseReference } from "./reference-syntax";

/** A folder's secrets by key. */
export type FolderSecrets = { get: (key: string) => PlainSecret | undefined };

/** The secrets of a folder by key, or undefined when the environment or folder does not exist. */
export type FolderLoader = (environment: string, secretPath: string) => Promise<FolderSecrets | undefined>;

export type Origin = { environment: string; secretPath: string; key: string };

/** What one request may spend on expansion; past either bound it answers 422. */
export type ExpansionBudget = {
  /** References substituted, over every value the request expands. */
  substitutions: number;
  /** Characters substituted, over every value the request expands. */
  characters: number;
};

export const DEFAULT_EXPANSION_BUDGET: ExpansionBudget = { substitutions: 100_000, characters: 32 * 1024 * 1024 };

export const placeId = (o: Origin) => `${o.environment}\u0000${o.secretPath}\u0000${o.key}`;

export const referenceForbidden = (ref: Origin, root: Origin) =>
  new ForbiddenError(
    `You do not have permission to read secret '${ref.key}' in environment '${ref.environment}' at path '${ref.secretPath}', which is referenced by secret '${root.key}' in environment '${root.environment}' at path '${root.secretPath}'.`,
    "ForbiddenReadSecretError",
  );

const tooLarge = (root: Origin) =>
  new UnprocessableEntityError(
    `Expanding the references of secret '${root.key}' in environment '${root.environment}' at path '${root.secretPath}' gives a value over the secret value limit (${MAX_SECRET_VALUE_BYTES} characters)`,
  );

const overBudget = () =>
  new UnprocessableEntityError(
    "Expanding the secret references of this request takes more substitutions than one request may make; read fewer secrets at a time or without expandSecretReferences",
  );

/** An unreadable secret found below the one being expanded; named in the 403 of every root that reaches it. */
class UnreadableReference {
  constructor(readonly place: Origin) {}
}

/** A multi-line result of a secret that skips multiline encoding reads as one quoted line. */
const formatMultiline = (value: string) => `"${value.replace(/\n/g, "\\n")}"`;

type Expanded = { text: string; truncated: boolean };

/**
 * The reference expansion of one request. Depth-first up to depth 10; a reference back into the
 * chain being expanded is substituted once, unexpanded; a missing secret or folder stays literal;
 * every referenced secret needs read-value permission, else 403 naming it and the secret expanded.
 * Passes repeat (at most 10) only while substitution composed references not seen before.
 *
 * Each secret is expanded once per request and its result reused wherever it is referenced again
 * (a result cut short by the depth bound is reused only at the same depth), so the work grows with
 * the number of distinct references, not with the number of paths through them. Where a cycle
 * makes a secret's expansion depend on the secret it was entered from, the first one stands.
 * Expansions run one after another, so the secrets in progress are exactly the current chain.
 * Every expanded value stays within the secret value limit, and the request within its budget.
 */
export const createExpander = (ability: Ability, load: FolderLoader, budget = DEFAULT_EXPANSION_BUDGET) => {
  const complete = new Map<string, string>();
  const cutAtDepth = new Map<string, string>();
  const unreadableBelow = new Map<string, Origin>();
  let substitutions = 0;
  let characters = 0;
  let queue: Promise<unknown> = Promise.resolve();

  const spend = (length: number) => {
    substitutions += 1;
    characters += length;
    if (substitutions > budget.substitutions || characters > budget.characters) throw overBudget();
  };

  const expandOne = async (value: string, root: Origin) => {
    const seen = new Set<string>();
    const chain = new Set<string>([placeId(root)]);
    const markSeen = (text: string) => {
      for (const match of text.matchAll(REFERENCE)) seen.add(match[0]);
    };

    const expandText = async (text: string, from: Origin, depth: number): Promise<Expanded> => {
      if (!hasReference(text)) return { text, truncated: false };
      if (depth > MAX_REFERENCE_DEPTH) {
        // Left unexpanded for good: a later pass must not pick these up again.
        markSeen(text);
        return { text, truncated: true };
      }
      const parts: string[] = [];
      let size = 0;
      let truncated = false;
      let last = 0;
      for (const match of text.matchAll(REFERENCE)) {
        parts.push(text.slice(last, match.index));
        size += match.index - last;
        last = match.index + match[0].length;
        seen.add(match[0]);
        const ref = parseReference(match[1]!, from);
        const target = ref ? (await load(ref.environment, ref.secretPath))?.get(ref.key) : undefined;
        let sub = match[0];
        if (ref && target) {
          const place = { environment: ref.environment, secretPath: ref.secretPath, key: ref.key };
          const tags = target.tags.map((t) => t.slug);
          if (!canReadValue(ability, secretObject(place.environment, place.secretPath, place.key, tags)))
            throw new UnreadableReference(place);
          const id = placeId(place);
          const below = unreadableBelow.get(id);
          if (below) throw new UnreadableReference(below);
          const atDepth = `${id}\u0000${depth + 1}`;
          const known = complete.get(id) ?? cutAtDepth.get(atDepth);
          if (chain.has(id)) {
            sub = target.value();
          } else if (known !== undefined) {
            sub = known;
            markSeen(known);
            if (!complete.has(id)) truncated = true;
          } else {
            chain.add(id);
            let inner: Expanded;
            try {
              inner = await expandText(target.value(), place, depth + 1);
            } catch (error) {
              if (error instanceof UnreadableReference) unreadableBelow.set(id, error.place);
              throw error;
            } finally {
              chain.delete(id);
            }
            if (inner.truncated) cutAtDepth.set(atDepth, inner.text);
            else complete.set(id, inner.text);
            truncated ||= inner.truncated;
            sub = inner.text;
          }
          spend(sub.length);
        }
        parts.push(sub);
        size += sub.length;
        if (size > MAX_SECRET_VALUE_BYTES) throw tooLarge(root);
      }
      parts.push(text.slice(last));
      size += text.length - last;
      if (size > MAX_SECRET_VALUE_BYTES) throw tooLarge(root);
      return { text: parts.join(""), truncated };
    };

    let result = value;
    for (let pass = 0; pass < MAX_REFERENCE_DEPTH; pass += 1) {
      try {
        result = (await expandText(result, root, 1)).text;
      } catch (error) {
        if (error instanceof UnreadableReference) throw referenceForbidden(error.place, root);
        throw error;
      }
      if (![...result.matchAll(REFERENCE)].some((m) => !seen.has(m[0]))) break;
    }
    return result;
  };

  /** The value of the secret at `root`, its references expanded. */
  const expand = (value: string, root: Origin & { skipMultilineEncoding?: boolean }): Promise<string> => {
    const run = queue.then(async () => {
      if (!hasReference(value)) return value;
      const result = await expandOne(value, root);
      return root.skipMultilineEncoding && result.includes("\n") ? formatMultiline(result) : result;
    });
    queue = run.catch(() => undefined);
    return run;
  };

  return { expand };
};

export type Expander = ReturnType<typeof createExpander>;
