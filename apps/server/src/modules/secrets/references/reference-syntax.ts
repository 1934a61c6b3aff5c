/** `${…}` whose body is letters, digits, `-`, `_`, `.` or `@`; anything else is literal text. */
export const REFERENCE = /\$\{([\w.@-]+)\}/g;

export type Reference = { raw: string; environment: string; secretPath: string; key: string };

export const MAX_REFERENCE_DEPTH = 10;

/**
 * `${KEY}` is in the same folder; `${env.KEY}` the root of `env`; `${env.a.b.KEY}` folder /a/b of
 * `env`. Cross-project references (`${@project.…}`) are not resolved: undefined, so they stay literal.
 */
export const parseReference = (body: string, origin: { environment: string; secretPath: string }) => {
  if (body.startsWith("@")) return undefined;
  const parts = body.split(".");
  if (parts.some((p) => p.length === 0)) return undefined;
  if (parts.length === 1)
    return { raw: body, environment: origin.environment, secretPath: origin.secretPath, key: body };
  return {
    raw: body,
    environment: parts[0]!,
    secretPath: `/${parts.slice(1, -1).join("/")}`,
    key: parts[parts.length - 1]!,
  } satisfies Reference;
};

export const referencesIn = (value: string, origin: { environment: string; secretPath: string }) => {
  const found: Reference[] = [];
  for (const match of value.matchAll(REFERENCE)) {
    const ref = parseReference(match[1]!, origin);
    if (ref) found.push(ref);
  }
  return found;
};

export const hasReference = (value: string) => value.includes("${") && /\$\{[\w.@-]+\}/.test(value);
