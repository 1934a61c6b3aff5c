import fc from "fast-check";
import { ZodFirstPartyTypeKind, type ZodTypeAny } from "zod";

/**
 * Values a careless or hostile client could put in a field: right shape with wrong content, wrong
 * types, values at and past the bounds, text the platform treats specially.
 */
export const HOSTILE_STRINGS = [
  "",
  " ",
  "\uD800",
  "a\uDFFFb",
  "\uDBFF\uD800\uDC00\uDC00",
  "nul\u0000inside",
  "%00",
  "%zz",
  "%C0%AF",
  "../../../etc/passwd",
  "' OR '1'='1' --",
  "$(id)",
  "${jndi:ldap://127.0.0.1/a}",
  "__proto__",
  "constructor",
  "\u202Eevil",
  "\r\nX-Injected: 1",
  "😀".repeat(64),
  "*",
  "**/*",
  "+(ab|abab)",
  "*a*a*a*a*a*a*a*a*a*b",
  "{{7*7}}",
  "<script>alert(1)</script>",
  "1e309",
  "-1",
  "NaN",
  "00000000-0000-0000-0000-000000000000",
  "x".repeat(4_096),
  "é".repeat(70_000),
] as const;

export const hostileString = (): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
    { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) },
    { weight: 1, arbitrary: fc.string({ unit: "grapheme-composite", maxLength: 40 }) },
  );

/** Any JSON value, biased to the ones schemas forget: nulls, huge numbers, deep nesting, odd keys. */
export const hostileValue = (): fc.Arbitrary<unknown> =>
  fc.oneof(
    fc.constantFrom(null, true, false, 0, -1, -0, 1.5, 1e308, -1e308, 2 ** 53 + 1, 2 ** 31, -(2 ** 63)),
    hostileString(),
    fc.constant([]),
    fc.constant({}),
    fc.constant(JSON.parse('{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}')),
    fc.constant(Array.from({ length: 2_000 }, (_, i) => i)),
    fc.constant(JSON.parse(`${"[".repeat(500)}${"]".repeat(500)}`)),
    fc.jsonValue({ maxDepth: 3 }),
  );

export type ArbitraryOptions = {
  /** Values a field with this name should sometimes take (real ids, so lookups and permission checks run). */
  knownValues: (key: string) => readonly string[];
  /** How often a field gets a hostile value instead of one the schema accepts (0: never). */
  hostility: number;
};

type Def = Record<string, unknown> & { typeName?: ZodFirstPartyTypeKind };
type Check = { kind: string; value?: number; regex?: RegExp; inclusive?: boolean };

const defOf = (schema: ZodTypeAny) => schema._def as Def;

const stringFor = (schema: ZodTypeAny, key: string, options: ArbitraryOptions): fc.Arbitrary<string> => {
  const checks = (defOf(schema).checks ?? []) as Check[];
  const min = checks.find((c) => c.kind === "min" || c.kind === "length")?.value ?? 0;
  const max = Math.min(checks.find((c) => c.kind === "max" || c.kind === "length")?.value ?? 64, 256);
  const known = options.knownValues(key);
  const kind = checks.find((c) => ["uuid", "email", "url", "datetime", "regex", "ip", "cidr"].includes(c.kind));
  let valid: fc.Arbitrary<string>;
  if (kind?.kind === "uuid") valid = fc.uuid();
  else if (kind?.kind === "email") valid = fc.emailAddress();
  else if (kind?.kind === "url") valid = fc.webUrl();
  else if (kind?.kind === "datetime")
    valid = fc.integer({ min: 1, max: 3_650 }).map((days) => new Date(Date.now() + days * 86_400_000).toISOString());
  else if (kind?.kind === "ip") valid = fc.ipV4();
  else if (kind?.kind === "regex" && kind.regex)
    // fast-check cannot generate from case-insensitive patterns; the case-sensitive form matches a subset.
    valid = fc
      .stringMatching(new RegExp(kind.regex.source, kind.regex.flags.replace("i", "")))
      .filter((s) => s.length <= 512);
  else valid = fc.string({ minLength: min, maxLength: Math.max(min, max) });
  if (known.length > 0 && options.hostility === 0) return fc.constantFrom(...known);
  const choices = [{ weight: 4, arbitrary: valid }];
  if (known.length > 0) choices.push({ weight: 8, arbitrary: fc.constantFrom(...known) });
  if (options.hostility > 0) choices.push({ weight: options.hostility, arbitrary: hostileString() });
  return fc.oneof(...choices);
};

const numberFor = (schema: ZodTypeAny, options: ArbitraryOptions): fc.Arbitrary<number> => {
  const checks = (defOf(schema).checks ?? []) as Check[];
  const min = checks.find((c) => c.kind === "min")?.value ?? -1e6;
  const max = checks.find((c) => c.kind === "max")?.value ?? 1e9;
  const isInt = checks.some((c) => c.kind === "int");
  const inRange = isInt
    ? fc.integer({ min: Math.max(min, -(2 ** 31)), max: Math.min(max, 2 ** 31) })
    : fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
  if (options.hostility === 0) return inRange;
  return fc.oneof(
    { weight: 8, arbitrary: inRange },
    { weight: options.hostility, arbitrary: fc.constantFrom(min - 1, max + 1, min, max, 0.5, 1e308, -1e308) },
  );
};

/**
 * A fast-check arbitrary for a zod schema: mostly values the schema accepts (so requests get past
 * validation into lookups and permission checks), often hostile strings in them, sometimes anything.
 */
export const arbitraryFor = (
  schema: ZodTypeAny | undefined,
  options: ArbitraryOptions,
  key = "",
  depth = 0,
): fc.Arbitrary<unknown> => {
  if (!schema || depth > 8) return fc.constant(undefined);
  const def = defOf(schema);
  const conforming = conformingFor(schema, def, options, key, depth);
  if (options.hostility === 0) return conforming;
  return fc.oneof({ weight: 16, arbitrary: conforming }, { weight: options.hostility, arbitrary: hostileValue() });
};

const conformingFor = (
  schema: ZodTypeAny,
  def: Def,
  options: ArbitraryOptions,
  key: string,
  depth: number,
): fc.Arbitrary<unknown> => {
  const inner = (s: unknown, k = key) => arbitraryFor(s as ZodTypeAny, options, k, depth + 1);
  switch (def.typeName) {
    case ZodFirstPartyTypeKind.ZodString:
      return stringFor(schema, key, options);
    case ZodFirstPartyTypeKind.ZodNumber:
      return numberFor(schema, options);
    case ZodFirstPartyTypeKind.ZodBoolean:
      return options.hostility === 0 ? fc.boolean() : fc.oneof(fc.boolean(), fc.constantFrom("true", "false", "1"));
    case ZodFirstPartyTypeKind.ZodLiteral:
      return fc.constant(def.value);
    case ZodFirstPartyTypeKind.ZodEnum:
      return fc.constantFrom(...(def.values as string[]));
    case ZodFirstPartyTypeKind.ZodOptional:
    case ZodFirstPartyTypeKind.ZodNullable:
    case ZodFirstPartyTypeKind.ZodDefault:
      return fc.oneof({ weight: 2, arbitrary: inner(def.innerType) }, { weight: 1, arbitrary: fc.constant(undefined) });
    case ZodFirstPartyTypeKind.ZodEffects:
      return inner(def.schema);
    case ZodFirstPartyTypeKind.ZodArray: {
      const maxLength = Math.min((def.maxLength as { value: number } | null)?.value ?? 4, 6);
      return fc.array(inner(def.type), { maxLength });
    }
    case ZodFirstPartyTypeKind.ZodUnion:
    case ZodFirstPartyTypeKind.ZodDiscriminatedUnion: {
      const choices = [...(def.options as Iterable<ZodTypeAny>)];
      return fc.oneof(...choices.map((c) => inner(c)));
    }
    case ZodFirstPartyTypeKind.ZodRecord:
      return fc.dictionary(
        options.hostility === 0
          ? fc.string({ minLength: 1, maxLength: 16 })
          : fc.oneof(fc.string({ maxLength: 16 }), fc.constantFrom("__proto__", "constructor", "\uD800")),
        inner(def.valueType),
        { maxKeys: 4 },
      );
    case ZodFirstPartyTypeKind.ZodObject: {
      const shape = (schema as unknown as { shape: Record<string, ZodTypeAny> }).shape;
      const fields = Object.fromEntries(Object.entries(shape).map(([k, s]) => [k, inner(s, k)]));
      const requiredKeys = Object.entries(shape)
        .filter(([, s]) => !s.isOptional())
        .map(([k]) => k);
      const record = fc.record(fields, { requiredKeys: options.hostility === 0 ? requiredKeys : [] });
      if (options.hostility === 0) return record;
      return fc.oneof(
        { weight: 8, arbitrary: record },
        { weight: options.hostility, arbitrary: record.map((r) => ({ ...r, unexpectedField: "x", "": null })) },
      );
    }
    case ZodFirstPartyTypeKind.ZodNever:
      return fc.constant(undefined);
    default:
      return hostileValue();
  }
};
