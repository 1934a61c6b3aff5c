import { BadRequestError } from "../../../errors";

/** One LDIF change record (RFC 2849) as the LDAP provider applies it. */
export type LdifRecord =
  | { type: "add"; dn: string; attributes: Map<string, Buffer[]> }
  | { type: "delete"; dn: string }
  | {
      type: "modify";
      dn: string;
      changes: { operation: "add" | "delete" | "replace"; attribute: string; values: Buffer[] }[];
    };

const MAX_RECORDS = 50;

type Line = { name: string; value: Buffer; text: string };

const invalid = (message: string) => new BadRequestError(`Invalid LDIF: ${message}`);

/** `name: value`, `name:: base64`; URL values (`name:< …`) are refused: they would read files. */
const parseLine = (line: string): Line => {
  const colon = line.indexOf(":");
  if (colon <= 0) throw invalid(`expected "attribute: value", found "${line.slice(0, 40)}"`);
  const name = line.slice(0, colon).trim();
  const rest = line.slice(colon + 1);
  if (rest.startsWith(":")) {
    const encoded = rest.slice(1).trim();
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(encoded)) throw invalid(`bad base64 value for ${name}`);
    const value = Buffer.from(encoded, "base64");
    return { name, value, text: value.toString("utf8") };
  }
  if (rest.startsWith("<")) throw invalid("URL values are not supported");
  const text = rest.replace(/^ +/, "");
  return { name, value: Buffer.from(text, "utf8"), text };
};

/** Lines with continuations joined and comments dropped, grouped into records by blank lines. */
const recordsOf = (ldif: string) => {
  const records: string[][] = [];
  let current: string[] = [];
  for (const raw of ldif.replace(/\r\n/g, "\n").split("\n")) {
    if (raw.startsWith(" ") && current.length > 0) {
      current[current.length - 1] += raw.slice(1);
    } else if (raw.trim() === "") {
      if (current.length > 0) records.push(current);
      current = [];
    } else if (!raw.startsWith("#")) {
      current.push(raw);
    }
  }
  if (current.length > 0) records.push(current);
  // A leading "version: 1" line stands alone or before the first dn.
  if (records[0]?.[0]?.startsWith("version:")) {
    records[0].shift();
    if (records[0].length === 0) records.shift();
  }
  return records;
};

const parseModify = (dn: string, lines: string[]): LdifRecord => {
  const changes: { operation: "add" | "delete" | "replace"; attribute: string; values: Buffer[] }[] = [];
  let index = 0;
  while (index < lines.length) {
    const head = parseLine(lines[index]!);
    const operation = head.name.toLowerCase();
    if (operation !== "add" && operation !== "delete" && operation !== "replace")
      throw invalid(`unknown modify operation "${head.name}"`);
    const attribute = head.text.trim();
    const values: Buffer[] = [];
    index += 1;
    while (index < lines.length && lines[index] !== "-") {
      const line = parseLine(lines[index]!);
      if (line.name.toLowerCase() !== attribute.toLowerCase())
        throw invalid(`"${line.name}" inside a change of "${attribute}"`);
      values.push(line.value);
      index += 1;
    }
    index += 1; // the "-" separator
    changes.push({ operation, attribute, values });
  }
  if (changes.length === 0) throw invalid(`modify of ${dn} has no changes`);
  return { type: "modify", dn, changes };
};

/** Parse rendered LDIF into change records; a record without `changetype` is an add. */
export const parseLdif = (ldif: string): LdifRecord[] => {
  const records = recordsOf(ldif);
  if (records.length === 0) throw invalid("no records");
  if (records.length > MAX_RECORDS) throw invalid(`at most ${MAX_RECORDS} records are allowed`);
  return records.map((lines) => {
    const first = parseLine(lines[0]!);
    if (first.name.toLowerCase() !== "dn" || first.text.trim() === "") throw invalid("each record starts with dn:");
    const dn = first.text.trim();
    let body = lines.slice(1);
    let changetype = "add";
    if (body[0] && parseLine(body[0]).name.toLowerCase() === "changetype") {
      changetype = parseLine(body[0]).text.trim().toLowerCase();
      body = body.slice(1);
    }
    if (changetype === "delete") {
      if (body.length > 0) throw invalid(`delete of ${dn} takes no attributes`);
      return { type: "delete", dn };
    }
    if (changetype === "modify") return parseModify(dn, body);
    if (changetype !== "add") throw invalid(`changetype "${changetype}" is not supported`);
    const attributes = new Map<string, Buffer[]>();
    for (const raw of body) {
      const line = parseLine(raw);
      attributes.set(line.name, [...(attributes.get(line.name) ?? []), line.value]);
    }
    if (attributes.size === 0) throw invalid(`add of ${dn} has no attributes`);
    return { type: "add", dn, attributes };
  });
};
