import { randomInt } from "node:crypto";
import { BadRequestError } from "../../../errors";

const EXPRESSION = /{{\s*([^}]*?)\s*}}/g;

/** Reject a statement template that uses anything but the named variables (checked on write). */
export const assertTemplate = (label: string, template: string | undefined, allowed: readonly string[]) => {
  if (!template) return;
  for (const match of template.matchAll(EXPRESSION)) {
    const name = match[1] ?? "";
    if (!allowed.includes(name)) {
      throw new BadRequestError(
        `${label} template may only use ${allowed.map((a) => `{{${a}}}`).join(", ")}; found {{${name}}}`,
      );
    }
  }
};

export const renderTemplate = (template: string, values: Record<string, string>) =>
  template.replace(EXPRESSION, (_whole, name: string) => values[name] ?? "");

/** Statements are separated by `;` (as the reference splits them); blank ones are dropped. */
export const splitStatements = (rendered: string) =>
  rendered
    .split(";")
    .map((statement) => statement.trim())
    .filter((statement) => statement.length > 0);

/** The credential name of a lease: the secret's prefix and the lease id, so strays can be traced to a lease. */
export const leaseEntityName = (entityPrefix: string, leaseId: string) =>
  `${entityPrefix}_${leaseId.replace(/-/g, "")}`;

/** Finds the lease id inside a credential name built by leaseEntityName (possibly wrapped by a template). */
export const leaseIdFromEntityName = (entityPrefix: string, name: string): string | undefined => {
  const at = name.indexOf(`${entityPrefix}_`);
  if (at < 0) return undefined;
  const hex = name.slice(at + entityPrefix.length + 1, at + entityPrefix.length + 33);
  if (!/^[0-9a-f]{32}$/.test(hex)) return undefined;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};

/** Applies the username template (reference expressions) around the lease's traceable name. */
export const renderUsername = (template: string | null, randomUsername: string, identityName: string) => {
  if (!template) return randomUsername;
  return renderTemplate(template, {
    randomUsername,
    unixTimestamp: String(Math.floor(Date.now() / 1000)),
    "identity.name": identityName.toLowerCase().replace(/[^a-z0-9_-]/g, "_"),
  }).replace(/[^A-Za-z0-9_.-]/g, "_");
};

export type PasswordRequirements = {
  length: number;
  required: { lowercase: number; uppercase: number; digits: number; symbols: number };
  allowedSymbols?: string;
};

const DEFAULT_REQUIREMENTS: PasswordRequirements = {
  length: 48,
  required: { lowercase: 1, uppercase: 1, digits: 1, symbols: 0 },
  allowedSymbols: "-_.~!*",
};

const CLASSES = {
  lowercase: "abcdefghijklmnopqrstuvwxyz",
  uppercase: "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
  digits: "0123456789",
} as const;

const pick = (alphabet: string) => alphabet[randomInt(alphabet.length)]!;

/**
 * A password meeting the requirements, from a cryptographic RNG. Its alphabet never holds quotes,
 * semicolons or spaces, so it is safe inside the statement templates.
 */
export const generatePassword = (requirements: PasswordRequirements = DEFAULT_REQUIREMENTS) => {
  const symbols = requirements.allowedSymbols || "-_.~!*";
  const pools: [string, number][] = [
    [CLASSES.lowercase, requirements.required.lowercase],
    [CLASSES.uppercase, requirements.required.uppercase],
    [CLASSES.digits, requirements.required.digits],
    [symbols, requirements.required.symbols],
  ];
  const chars: string[] = [];
  for (const [alphabet, count] of pools) for (let i = 0; i < count; i += 1) chars.push(pick(alphabet));
  const all = pools
    .filter(([, count]) => count > 0)
    .map(([alphabet]) => alphabet)
    .join("");
  while (chars.length < requirements.length) chars.push(pick(all));
  for (let i = chars.length - 1; i > 0; i -= 1) {
    const j = randomInt(i + 1);
    [chars[i], chars[j]] = [chars[j]!, chars[i]!];
  }
  return chars.join("");
};

/** Provider errors reach clients and logs: strip every secret they might echo. */
export const redactSecrets = (message: string, secrets: (string | undefined)[]) => {
  let out = message;
  for (const secret of secrets) if (secret && secret.length >= 4) out = out.split(secret).join("[redacted]");
  return out.slice(0, 500);
};
