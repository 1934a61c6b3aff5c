import { ForbiddenError } from "../../errors";
import type { Cooperative } from "../../lib/cooperative";
import type { Expander } from "./references/expand";
import { hasReference } from "./references/reference-syntax";
import type { PlainSecret } from "./secret-crypto";

/** How many secrets of a list are built at once: their expansions run together, then they are written. */
const WINDOW = 256;

/**
 * `build` over `items` in order, each result handed to `emit` as soon as its window is complete, so a
 * list's objects live no longer than their window. A build answers at once when its value needs no
 * expansion (most do): only the others cost promises. Expansion failures of a list are gathered into
 * one 403 after every item has been tried.
 */
export const expandEach = async <I, T>(
  items: readonly I[],
  build: (item: I) => T | Promise<T>,
  emit: (value: T, item: I) => void,
  slices?: Cooperative,
) => {
  const failures: string[] = [];
  const fail = (error: unknown) => {
    if (!(error instanceof ForbiddenError)) throw error;
    failures.push(`Failed to expand secret reference: ${error.message}`);
  };
  for (let start = 0; start < items.length; start += WINDOW) {
    const window = items.slice(start, start + WINDOW);
    const results = new Array<T>(window.length);
    const done = new Array<boolean>(window.length).fill(false);
    const pending: Promise<void>[] = [];
    for (let i = 0; i < window.length; i += 1) {
      // A long list gives other requests the event loop between slices (see cooperative).
      if (slices?.due()) await slices.pause();
      let out: T | Promise<T>;
      try {
        out = build(window[i]!);
      } catch (error) {
        fail(error);
        continue;
      }
      if (out instanceof Promise) {
        const settled = out.then((value) => {
          results[i] = value;
          done[i] = true;
        }, fail);
        // Heard now, awaited below: a failure other than a 403 while the window is still being built
        // (or after a later item threw) must not surface as an unhandled rejection meanwhile.
        settled.catch(() => undefined);
        pending.push(settled);
      } else {
        results[i] = out;
        done[i] = true;
      }
    }
    await Promise.all(pending);
    if (failures.length === 0) results.forEach((value, i) => done[i] && emit(value, window[i]!));
  }
  if (failures.length > 0)
    throw new ForbiddenError("Failed to expand one or more secret references", "ForbiddenRequestError", failures);
};

export const expandAll = async <I, T>(items: readonly I[], build: (item: I) => T | Promise<T>) => {
  const out: T[] = [];
  await expandEach(items, build, (value) => out.push(value));
  return out;
};

/** A visible value, expanded in its own environment and path when asked (a promise only then). */
export const visibleValue = (
  secret: PlainSecret,
  place: { environment: string; secretPath: string },
  expander: Expander | undefined,
): string | Promise<string> => {
  const value = secret.value();
  return expander && hasReference(value)
    ? expander.expand(value, { ...place, key: secret.key, skipMultilineEncoding: secret.skipMultilineEncoding })
    : value;
};

/** `build` with the value, synchronously when it is at hand. */
export const withValue = <T>(value: string | Promise<string>, build: (value: string) => T): T | Promise<T> =>
  typeof value === "string" ? build(value) : value.then(build);
