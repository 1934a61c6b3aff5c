/**
 * Secrets as text: what a person pastes (a `.env` file, a JSON object, a flat YAML mapping) read into
 * key/value pairs, and a folder written out as a `.env` file. Only flat string values are secrets:
 * nesting is refused with the line that holds it, never flattened by a guess.
 */

export type ParsedSecrets = { format: "env" | "json" | "yaml"; entries: [string, string][]; problems: string[] };

const DOUBLE_QUOTED_ESCAPES: Record<string, string> = { n: "\n", r: "\r", t: "\t", '"': '"', "\\": "\\" };

/** A double-quoted value's escapes (\n, \t, \", \\); others keep their backslash. */
const unescapeDouble = (text: string) => text.replace(/\\(.)/g, (all, c: string) => DOUBLE_QUOTED_ESCAPES[c] ?? all);

/**
 * One value after `=` or `:`: double-quoted (escapes, may continue on the next lines), single-quoted
 * (literal), or bare (trimmed, a ` #` starts a comment). Returns the value and how many extra lines it used.
 */
const readValue = (rest: string, following: readonly string[]): { value: string; extra: number } | undefined => {
  const text = rest.trim();
  const quote = text[0];
  if (quote === '"' || quote === "'") {
    let body = text.slice(1);
    let extra = 0;
    const closing = quote === '"' ? /(?<!\\)(?:\\\\)*"/ : /'/;
    while (!closing.test(body)) {
      if (extra >= following.length) return undefined;
      body += `\n${following[extra]}`;
      extra += 1;
    }
    const end = body.search(closing) + (body.match(closing)?.[0].length ?? 1) - 1;
    const inner = body.slice(0, end);
    return { value: quote === '"' ? unescapeDouble(inner) : inner, extra };
  }
  const comment = text.search(/\s#/);
  return { value: (comment === -1 ? text : text.slice(0, comment)).trim(), extra: 0 };
};

const parseLines = (text: string, separator: "=" | ":"): Omit<ParsedSecrets, "format"> => {
  const lines = text.split(/\r?\n/);
  const entries: [string, string][] = [];
  const problems: string[] = [];
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i]!.trim();
    if (line === "" || line.startsWith("#") || line === "---") continue;
    const body = separator === "=" ? line.replace(/^export\s+/, "") : line;
    const at = body.indexOf(separator);
    if (at <= 0) {
      problems.push(`Line ${i + 1}: expected KEY${separator === "=" ? "=value" : ": value"}`);
      continue;
    }
    if (separator === ":" && /^\s/.test(lines[i]!)) {
      problems.push(`Line ${i + 1}: nested YAML is not a secret; only a flat mapping of keys is imported`);
      continue;
    }
    const key = body
      .slice(0, at)
      .trim()
      .replace(/^["']|["']$/g, "");
    const rest = body.slice(at + 1);
    if (separator === ":" && rest.trim() === "" && /^\s+\S/.test(lines[i + 1] ?? "")) {
      problems.push(`Line ${i + 1}: ${key} holds a nested value; only a flat mapping of keys is imported`);
      continue;
    }
    const read = readValue(rest, lines.slice(i + 1));
    if (!read) {
      problems.push(`Line ${i + 1}: the quoted value of ${key} is never closed`);
      break;
    }
    entries.push([key, read.value]);
    i += read.extra;
  }
  return { entries, problems };
};

const parseJson = (text: string): Omit<ParsedSecrets, "format"> => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return { entries: [], problems: [`Not valid JSON: ${(error as Error).message}`] };
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    return { entries: [], problems: ["A JSON import is one object of keys and values"] };
  const entries: [string, string][] = [];
  const problems: string[] = [];
  for (const [key, value] of Object.entries(parsed)) {
    if (typeof value === "string") entries.push([key, value]);
    else if (typeof value === "number" || typeof value === "boolean") entries.push([key, String(value)]);
    else problems.push(`${key}: only strings, numbers and booleans are secret values`);
  }
  return { entries, problems };
};

/** Reads pasted text: JSON when it starts with `{`, YAML when its first entry uses `key: value`, else `.env`. */
export const parseSecretsText = (text: string): ParsedSecrets => {
  const trimmed = text.trim();
  if (trimmed.startsWith("{")) return { format: "json", ...parseJson(trimmed) };
  const first = trimmed.split(/\r?\n/).find((line) => line.trim() !== "" && !line.trim().startsWith("#")) ?? "";
  const yaml = first.trim() === "---" || /^[^=\s]+:(\s|$)/.test(first.replace(/^export\s+/, ""));
  const format = yaml ? "yaml" : "env";
  const { entries, problems } = parseLines(text, yaml ? ":" : "=");
  // The last occurrence of a key wins, as a shell sourcing the file would have it; say so.
  const seen = new Map<string, string>();
  for (const [key, value] of entries) {
    if (seen.has(key)) problems.push(`${key} appears more than once: the last value is imported`);
    seen.set(key, value);
  }
  return { format, entries: [...seen], problems };
};

/** A value as a `.env` line writes it: bare when that reads back the same, else double-quoted with escapes. */
const dotenvValue = (value: string) =>
  /^[^\s"'#\\]*$/.test(value)
    ? value
    : `"${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n").replace(/\r/g, "\\r")}"`;

/** A folder's secrets as a `.env` file; values the caller may not read are named in a comment, not exported. */
export const toDotenv = (secrets: readonly { key: string; value: string; hidden: boolean }[]) => {
  const lines = secrets.filter((s) => !s.hidden).map((s) => `${s.key}=${dotenvValue(s.value)}`);
  const hidden = secrets.filter((s) => s.hidden).map((s) => s.key);
  if (hidden.length > 0) lines.unshift(`# Not exported (hidden by policy): ${hidden.join(", ")}`);
  return `${lines.join("\n")}\n`;
};
