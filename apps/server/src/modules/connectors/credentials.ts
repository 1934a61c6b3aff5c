import { randomInt } from "node:crypto";

/**
 * The credentials Keyward makes for outside systems, and the rule that keeps every credential out
 * of the error messages that reach clients and logs.
 */

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
 * semicolons or spaces, so it is safe inside statement templates; with no symbols required it is
 * letters and digits only.
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

/** Letters and digits only, for a credential that travels where symbols might need quoting. */
export const generateAlphanumericPassword = (length: number) =>
  generatePassword({ length, required: { lowercase: 1, uppercase: 1, digits: 1, symbols: 0 } });

const REDACTED = "[redacted]";
const MAX_MESSAGE = 500;

const strip = (text: string, secrets: readonly (string | undefined)[]) => {
  let out = text;
  for (const secret of secrets) if (secret && secret.length >= 4) out = out.split(secret).join(REDACTED);
  return out;
};

/** An outside system's error text as it may be shown: every secret it might echo stripped, and bounded. */
export const redactSecrets = (message: string, secrets: readonly (string | undefined)[]) =>
  strip(message, secrets).slice(0, MAX_MESSAGE);

/**
 * The same error with every secret stripped from its message and stack, so whoever catches it (a
 * log line, a 400 answer) cannot show a password. Its class, name and code stay, for callers that
 * tell errors apart by them.
 */
export const scrubError = (error: unknown, secrets: readonly (string | undefined)[]): unknown => {
  if (!(error instanceof Error)) return error;
  const message = strip(error.message, secrets);
  if (message !== error.message) error.message = message;
  if (error.stack) error.stack = strip(error.stack, secrets);
  const sql = (error as { sql?: unknown }).sql;
  if (typeof sql === "string") (error as { sql?: string }).sql = strip(sql, secrets);
  return error;
};
