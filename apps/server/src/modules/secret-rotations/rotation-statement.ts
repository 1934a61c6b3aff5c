import mysql from "mysql2/promise";
import pg from "pg";
import { BadRequestError } from "../../errors";

/** The SQL dialect a custom rotation statement is written in. */
export type StatementDialect = "postgres" | "mysql";

export type StatementValues = { username: string; password: string; database: string };

type Name = keyof StatementValues;
type Quote = "'" | '"' | "`";
type Part = string | { name: Name; quote: Quote | undefined };

const NAMES: readonly string[] = ["username", "password", "database"];
const PLACEHOLDER_AT = /\{\{\s*([a-zA-Z]+)\s*\}\}/y;
const WHOLE_PLACEHOLDER = /^\{\{\s*([a-zA-Z]+)\s*\}\}$/;
const WORD = /[A-Za-z0-9_$]/;

const refuse = (message: string) => new BadRequestError(message);
const INVALID = "Invalid expression detected in rotation statement";
const ALONE =
  "A placeholder in a rotation statement must stand on its own or be the whole of a quoted name or string, as in " +
  `ALTER USER "{{username}}" WITH PASSWORD '{{password}}'`;

const isWord = (char: string | undefined) => char !== undefined && WORD.test(char);
/** A character that makes the quote after it a different kind of text (E'…', U&"…", _utf8'…', N'…'). */
const isPrefix = (char: string | undefined) => isWord(char) || char === "&";

/** The quote characters of a dialect: what opens a string or a quoted name. */
const quotesOf = (dialect: StatementDialect): readonly string[] =>
  dialect === "postgres" ? ["'", '"'] : ["'", '"', "`"];

/** Whether a backslash escapes the next character inside the quoted text opened at `at`. */
const backslashEscapes = (dialect: StatementDialect, text: string, at: number) => {
  const quote = text[at];
  if (dialect === "mysql") return quote !== "`";
  // PostgreSQL: only in an escape string, E'…' (standard_conforming_strings is on by default).
  return quote === "'" && /[eE]/.test(text[at - 1] ?? "") && !isWord(text[at - 2]);
};

/** The index just past the quoted text opened at `at`. */
const closingOf = (dialect: StatementDialect, text: string, at: number) => {
  const quote = text[at]!;
  const escapes = backslashEscapes(dialect, text, at);
  for (let i = at + 1; i < text.length; i += 1) {
    if (escapes && text[i] === "\\") i += 1;
    else if (text[i] === quote) {
      if (text[i + 1] !== quote) return i + 1;
      i += 1;
    }
  }
  throw refuse("The rotation statement has an unterminated quoted name or string");
};

/**
 * Every `{{…}}` names username, password or database, and the first two both appear. Checked over the
 * whole text, quoted parts included, before anything else.
 */
const assertPlaceholders = (statement: string) => {
  const names = new Set<string>();
  for (let at = statement.indexOf("{{"); at !== -1; at = statement.indexOf("{{", at + 2)) {
    PLACEHOLDER_AT.lastIndex = at;
    const name = PLACEHOLDER_AT.exec(statement)?.[1];
    if (name === undefined || !NAMES.includes(name)) throw refuse(INVALID);
    names.add(name);
  }
  if (!names.has("username") || !names.has("password"))
    throw refuse("The rotation statement must contain {{username}} and {{password}}");
};

/**
 * Splits a custom rotation statement into text and placeholders, with the quoting each placeholder
 * stands in. Refused (400): a placeholder other than {{username}}, {{password}} and {{database}}; a
 * statement without the first two; a placeholder inside a larger quoted text or glued to a word; an
 * unterminated quote; a comment; a PostgreSQL dollar quote; and more than one statement (a `;` outside
 * quotes other than a final one). The server's own protocol choice refuses a second statement again
 * when it runs, so this check is the clear message, not the only guard.
 */
export const parseRotationStatement = (dialect: StatementDialect, statement: string): Part[] => {
  assertPlaceholders(statement);
  const parts: Part[] = [];
  let text = "";
  let i = 0;
  const quotes = quotesOf(dialect);
  while (i < statement.length) {
    const char = statement[i]!;
    const next = statement[i + 1];
    if (quotes.includes(char)) {
      const end = closingOf(dialect, statement, i);
      const inner = statement.slice(i + 1, end - 1);
      const whole = WHOLE_PLACEHOLDER.exec(inner);
      if (whole) {
        if (isPrefix(statement[i - 1]) || isWord(statement[end])) throw refuse(ALONE);
        parts.push(text, { name: whole[1] as Name, quote: char as Quote });
        text = "";
      } else if (inner.includes("{{")) throw refuse(ALONE);
      else text += statement.slice(i, end);
      i = end;
      continue;
    }
    if (char === "{" && next === "{") {
      PLACEHOLDER_AT.lastIndex = i;
      const match = PLACEHOLDER_AT.exec(statement)!;
      const end = i + match[0].length;
      const around = [statement[i - 1], statement[end]];
      if (around.some((c) => isWord(c) || (c !== undefined && quotes.includes(c)))) throw refuse(ALONE);
      parts.push(text, { name: match[1] as Name, quote: undefined });
      text = "";
      i = end;
      continue;
    }
    if ((char === "-" && next === "-") || (char === "/" && next === "*") || (dialect === "mysql" && char === "#"))
      throw refuse("The rotation statement may not contain comments");
    if (dialect === "postgres" && char === "$" && !isWord(statement[i - 1]))
      throw refuse("The rotation statement may not contain dollar-quoted strings or parameters");
    if (char === ";") {
      if (statement.slice(i + 1).trim() !== "") throw refuse("The rotation statement must be a single SQL statement");
      break;
    }
    text += char;
    i += 1;
  }
  parts.push(text);
  return parts.filter((part) => part !== "");
};

/** A value quoted by the driver's own rules for where its placeholder stands. */
const quoted = (dialect: StatementDialect, name: Name, quote: Quote | undefined, value: string) => {
  if (dialect === "postgres") {
    const asName = quote === '"' || (quote === undefined && name !== "password");
    return asName ? pg.escapeIdentifier(value) : pg.escapeLiteral(value);
  }
  // MySQL: an account name is a string ('user'@'host'); a database is a name.
  const asName = quote === "`" || (quote === undefined && name === "database");
  return asName ? mysql.escapeId(value, true) : mysql.escape(value);
};

/** The one statement to run: the template's text with each placeholder replaced by its quoted value. */
export const renderRotationStatement = (dialect: StatementDialect, statement: string, values: StatementValues) =>
  parseRotationStatement(dialect, statement)
    .map((part) => (typeof part === "string" ? part : quoted(dialect, part.name, part.quote, values[part.name])))
    .join("")
    .trim();
