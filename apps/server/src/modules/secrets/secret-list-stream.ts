import { createHash } from "node:crypto";
import type { SecretImportResult } from "@keyward/contract";
import { digestTag, type StreamSink } from "../../http/json-response";
import { cooperative } from "../../lib/cooperative";
import { expandEach } from "./list-expansion";
import { hasReference } from "./references/reference-syntax";
import type { Expander } from "./references/expand";
import { isPersonal } from "./secret-access";
import type { ReferenceFreeMemo } from "./reference-free";
import type { RowOpener } from "./secret-source";
import { toSecretRead, type Place } from "./secret.dto";
import type { SecretRow } from "./secret.repository";

const NONE = "\u0001";
const stamp = (value: Date | string) => (typeof value === "string" ? value : value.toISOString());

/** A row's value, comment and metadata as stored (sealed), as text. */
const sealedTextOf = (row: SecretRow) =>
  `${row.encrypted_fields ?? `${row.encrypted_value}\u0000${row.encrypted_comment}`}\u0000${JSON.stringify(row.metadata)}`;

/**
 * One secret's part of a streamed list's tag: every input of toSecretRead (the test of this file keeps
 * the two in step), from the row as stored — the value, comment and metadata sealed, so a tag never
 * digests a value the caller may not read — and the expanded value when the list expands one.
 */
export const tagLineOf = (row: SecretRow, place: Place, expanded: string | undefined) =>
  `${row.id}\u0000${row.version}\u0000${row.type}\u0000${row.key}\u0000${place.projectId}\u0000${place.environment}\u0000${place.secretPath}\u0000${row.skip_multiline_encoding}\u0000${row.reminder_note ?? NONE}\u0000${row.reminder_repeat_days ?? NONE}\u0000${row.actor_id ?? NONE}\u0000${row.actor_type ?? NONE}\u0000${stamp(row.created_at)}\u0000${stamp(row.updated_at)}\u0000${JSON.stringify(row.tags)}\u0000${sealedTextOf(row)}\u0000${expanded ?? NONE}\n`;

/** The tag's text is digested in pieces of about this many characters (one digest call per row costs more). */
const DIGEST_PIECE = 64 * 1024;

export type ListToStream = {
  /** The rows to write, in order (filtered and cut to the page). */
  rows: SecretRow[];
  /** Opens a row for one use: the list keeps no opened secret (see SecretSource.opener). */
  open: RowOpener;
  referenceFree: ReferenceFreeMemo;
  /** Each folder's place by folder id: a map, not a function of the caller's, whose scope would keep every row. */
  places: ReadonlyMap<string, Place>;
  viewSecretValue: boolean;
  expander: Expander | undefined;
  imports: Promise<SecretImportResult[]>;
  /** A paged list's page and the count it was cut from. */
  page: { offset: number; limit: number } | undefined;
  total: number;
};

/** A row's place: rows come folder by folder, so the last folder's answers most lookups. */
const placeLookup = (places: ReadonlyMap<string, Place>) => {
  let lastFolder: string | undefined;
  let lastPlace: Place | undefined;
  return (row: SecretRow) => {
    if (row.folder_id !== lastFolder) [lastFolder, lastPlace] = [row.folder_id, places.get(row.folder_id)!];
    return lastPlace!;
  };
};

/** A shared value a list asked without values shows as the mask (a personal one is its owner's own). */
const masked = (row: SecretRow, viewSecretValue: boolean) => !viewSecretValue && !isPersonal(row);

type Body = {
  /** The rows not yet written; each is cleared from here as it is written. */
  pending: (SecretRow | undefined)[];
  placeOf: (row: SecretRow) => Place;
  open: RowOpener;
  viewSecretValue: boolean;
  expanded: Map<SecretRow, string>;
  importsText: string;
  page: ListToStream["page"];
  total: number;
};

/**
 * Writes the body. Built at module level from data alone: a producer made inside prepareListStream
 * would keep its whole scope — the expander, and through it the request's source and every row it
 * read — until the last byte, so a slow reader's list would hold all its rows, not the unwritten ones.
 */
const producerOf =
  ({ pending, placeOf, open, viewSecretValue, expanded, importsText, page, total }: Body) =>
  async ({ out, keepUp }: StreamSink) => {
    const slices = cooperative();
    out.raw('{"secrets":[');
    for (let i = 0; i < pending.length; i += 1) {
      const row = pending[i]!;
      pending[i] = undefined;
      const place = placeOf(row);
      const secret = open.secret(row);
      const read = masked(row, viewSecretValue)
        ? toSecretRead(secret, place, { hidden: true })
        : toSecretRead(secret, place, { hidden: false, value: expanded.get(row) ?? secret.value() });
      out.raw(i === 0 ? "" : ",").value(read);
      expanded.delete(row);
      const waiting = keepUp();
      if (waiting) await waiting;
      else if (slices.due()) await slices.pause();
    }
    out.raw('],"imports":').raw(importsText);
    if (page) out.raw(',"totalCount":').value(total);
    out.raw("}");
  };

/**
 * A large list, made ready to stream: what can still refuse is done first — each value with a
 * reference is expanded now (a failure is the list's 403, before any byte), the imports are built —
 * and the tag is digested from the rows as stored, the expansions and the imports. Only the rows and
 * the expansions are held until written: a row is opened for the reference check and again when it
 * is written, and let go each time, so no list holds 10,000 opened secrets or plaintexts; each row is
 * let go once written, so the body is never whole in memory.
 */
export const prepareListStream = async (list: ListToStream) => {
  const { rows, open, referenceFree, viewSecretValue, expander, page, total } = list;
  const placeOf = placeLookup(list.places);
  const slices = cooperative();
  const expanded = new Map<SecretRow, string>();
  if (expander)
    await expandEach(
      rows,
      (row) => {
        if (masked(row, viewSecretValue) || referenceFree.has(row)) return undefined;
        // The value alone is opened to look for a reference, and dropped (see createReferenceFreeMemo).
        const value = open.value(row);
        if (!hasReference(value)) return void referenceFree.add(row);
        const origin = { ...placeOf(row), key: row.key, skipMultilineEncoding: row.skip_multiline_encoding };
        return expander.expand(value, origin);
      },
      (value, row) => value !== undefined && expanded.set(row, value),
      slices,
    );
  const digest = createHash("sha256").update(JSON.stringify([viewSecretValue, expander !== undefined, page, total]));
  let text = "";
  for (const row of rows) {
    if (slices.due()) await slices.pause();
    text += tagLineOf(row, placeOf(row), expanded.get(row));
    if (text.length >= DIGEST_PIECE) {
      digest.update(text);
      text = "";
    }
  }
  digest.update(text);
  const importsText = JSON.stringify(await list.imports);
  digest.update(importsText);
  const body = { pending: rows, placeOf, open, viewSecretValue, expanded, importsText, page, total };
  return { etag: digestTag(digest), produce: producerOf(body) };
};

export type ListStream = Awaited<ReturnType<typeof prepareListStream>>;
