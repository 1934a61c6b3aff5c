import fc from "fast-check";
import { z, type ZodTypeAny } from "zod";
import { fillPath, toQueryString, type Operation } from "./operations";
import type { RawRequest } from "./send";
import type { FuzzActor, FuzzWorld } from "./world";
import { arbitraryFor, type ArbitraryOptions } from "./zod-arbitrary";

/** Runs per operation and actor, and the seed; both settable so a failure can be replayed or searched harder. */
export const FUZZ_RUNS = Number(process.env.KEYWARD_FUZZ_RUNS ?? 4);
export const FUZZ_SEED = Number(process.env.KEYWARD_FUZZ_SEED ?? 13);

const jsonHeaders = (actor: FuzzActor | undefined): Record<string, string> => ({
  "content-type": "application/json",
  ...(actor ? { authorization: `Bearer ${actor.token}` } : {}),
});

const shapeFor = (operation: Operation, options: ArbitraryOptions) =>
  fc.record({
    params: fc.record(
      Object.fromEntries(
        operation.pathParamNames.map((name) => {
          const shape = (operation.pathParams as { shape?: Record<string, never> } | undefined)?.shape;
          return [name, arbitraryFor(shape?.[name] ?? z.string(), options, name)];
        }),
      ),
    ),
    query: arbitraryFor(operation.query, options),
    body: arbitraryFor(operation.body, options),
  });

const hex = (byte: number) => `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;

/** Percent-encoded text; a lone surrogate (which encodeURIComponent refuses) goes out as its three WTF-8 bytes. */
const encodeText = (text: string) =>
  [...text]
    .map((char) => {
      const code = char.charCodeAt(0);
      if (code < 0xd800 || code > 0xdfff || char.length > 1) return encodeURIComponent(char);
      return hex(0xe0 | (code >> 12)) + hex(0x80 | ((code >> 6) & 0x3f)) + hex(0x80 | (code & 0x3f));
    })
    .join("");

const segment = (value: unknown) =>
  encodeText(value === undefined || value === null ? "" : typeof value === "string" ? value : JSON.stringify(value));

/**
 * `runs` requests per actor for one operation, generated from its zod schemas: a third with every
 * field as the schema wants it, the rest with hostile values mixed in (more of them in the last third).
 */
export const generatedRequests = (operation: Operation, world: FuzzWorld, runs = FUZZ_RUNS): RawRequest[] => {
  const shapes = [0, 1, 4].map((hostility) =>
    shapeFor(operation, { knownValues: world.knownValues(operation.name), hostility }),
  );
  const samples = fc.sample(fc.oneof(...shapes), { numRuns: runs * world.actors.length, seed: FUZZ_SEED });
  return samples.map((sample, index) => {
    const actor = operation.isPublic && index % 2 === 0 ? undefined : world.actors[index % world.actors.length];
    const params = sample.params as Record<string, unknown>;
    const hasBody = operation.method !== "GET" && sample.body !== undefined;
    return {
      label: `${operation.name} as ${actor?.name ?? "anonymous"}`,
      method: operation.method,
      path: fillPath(operation, (name) => segment(params[name])) + toQueryString(sample.query),
      headers: jsonHeaders(actor),
      body: hasBody ? Buffer.from(JSON.stringify(sample.body)) : undefined,
    };
  });
};

const accepts = (schema: ZodTypeAny | undefined, value: unknown) => !schema || schema.safeParse(value).success;

/** One request the schemas accept (the first of 50 samples that validates), as a base for the transport-level cases. */
export const plainRequest = (operation: Operation, world: FuzzWorld, actor = world.actors[1]): RawRequest => {
  const shape = shapeFor(operation, { knownValues: world.knownValues(operation.name), hostility: 0 });
  const samples = fc.sample(shape, { numRuns: 50, seed: FUZZ_SEED });
  const sample =
    samples.find(
      (s) =>
        accepts(operation.pathParams, s.params) && accepts(operation.query, s.query) && accepts(operation.body, s.body),
    ) ?? samples[0];
  const params = sample!.params as Record<string, unknown>;
  return {
    label: operation.name,
    method: operation.method,
    path: fillPath(operation, (name) => segment(params[name])) + toQueryString(sample!.query),
    headers: jsonHeaders(actor),
    body: operation.method !== "GET" ? Buffer.from(JSON.stringify(sample!.body ?? {})) : undefined,
  };
};
