import { createHash } from "node:crypto";
import type { SecretImportResult } from "@keyward/contract";
import { digestTag, type StreamSink } from "../../http/json-response";
import { cooperative } from "../../lib/cooperative";
import { expandEach, visibleValue } from "./list-expansion";
import type { Expander } from "./references/expand";
import { isPersonal } from "./secret-access";
import { forgetPlaintext, sealedTextOf, type PlainSecret } from "./secret-crypto";
import { toSecretRead, type Place } from "./secret.dto";

const NONE = "\u0001";
const stamp = (value: Date | string) => (typeof value === "string" ? value : value.toISOString());

/**
 * One secret's part of a streamed list's tag: every input of toSecretRead (the test of this file keeps
 * the two in step), with the value, comment and metadata as stored (sealed, so a tag never digests a
 * value the caller may not read) and the expanded value when the list expands one.
 */
export const tagLineOf = (secret: PlainSecret, place: Place, expanded: string | undefined) =>
  `${secret.id}\u0000${secret.version}\u0000${secret.type}\u0000${secret.key}\u0000${place.projectId}\u0000${place.environment}\u0000${place.secretPath}\u0000${secret.skipMultilineEncoding}\u0000${secret.reminderNote ?? NONE}\u0000${secret.reminderRepeatDays ?? NONE}\u0000${secret.actorId ?? NONE}\u0000${secret.actorType ?? NONE}\u0000${stamp(secret.createdAt)}\u0000${stamp(secret.updatedAt)}\u0000${JSON.stringify(secret.tags)}\u0000${sealedTextOf(secret)}\u0000${expanded ?? NONE}\n`;

/** The tag's text is digested in pieces of about this many characters (one digest call per row costs more). */
const DIGEST_PIECE = 64 * 1024;

export type ListToStream = {
  /** The secrets to write, in order, opened but not yet read. */
  opened: PlainSecret[];
  placeOf: (secret: PlainSecret) => Place;
  viewSecretValue: boolean;
  expander: Expander | undefined;
  imports: Promise<SecretImportResult[]>;
  /** A paged list's page and the count it was cut from. */
  page: { offset: number; limit: number } | undefined;
  total: number;
};

/**
 * A large list, made ready to stream: what can still refuse is done first — each value with a
 * reference is expanded now (a failure is the list's 403, before any byte), the imports are built —
 * and the tag is digested from the rows as stored, the expansions and the imports. Each secret is
 * let go once written (its plaintext forgotten, its row free for the collector), so the body is
 * never whole in memory.
 */
export const prepareListStream = async (list: ListToStream) => {
  const { opened, viewSecretValue, expander, page, total } = list;
  // Rows come folder by folder: the last folder's place answers most lookups.
  let lastFolder: string | undefined;
  let lastPlace: Place | undefined;
  const placeOf = (secret: PlainSecret) => {
    if (secret.folderId !== lastFolder) [lastFolder, lastPlace] = [secret.folderId, list.placeOf(secret)];
    return lastPlace!;
  };
  const hidden = (secret: PlainSecret) => !viewSecretValue && !isPersonal(secret);
  const slices = cooperative();
  const expanded = new Map<PlainSecret, string>();
  if (expander)
    await expandEach(
      opened,
      (secret) => {
        if (hidden(secret)) return undefined;
        // A value with no reference stays open until it is written: opening it twice would cost a
        // quarter more CPU than the list saves by streaming.
        const value = visibleValue(secret, placeOf(secret), expander);
        return typeof value === "string" ? undefined : value;
      },
      (value, secret) => value !== undefined && expanded.set(secret, value),
      slices,
    );
  const digest = createHash("sha256").update(JSON.stringify([viewSecretValue, expander !== undefined, page, total]));
  let text = "";
  for (const secret of opened) {
    if (slices.due()) await slices.pause();
    text += tagLineOf(secret, placeOf(secret), expanded.get(secret));
    if (text.length >= DIGEST_PIECE) {
      digest.update(text);
      text = "";
    }
  }
  digest.update(text);
  const importsText = JSON.stringify(await list.imports);
  digest.update(importsText);

  const pending: (PlainSecret | undefined)[] = opened;
  const produce = async ({ out, keepUp }: StreamSink) => {
    out.raw('{"secrets":[');
    for (let i = 0; i < pending.length; i += 1) {
      const secret = pending[i]!;
      pending[i] = undefined;
      const place = placeOf(secret);
      const read = hidden(secret)
        ? toSecretRead(secret, place, { hidden: true })
        : toSecretRead(secret, place, { hidden: false, value: expanded.get(secret) ?? secret.value() });
      out.raw(i === 0 ? "" : ",").value(read);
      forgetPlaintext(secret);
      expanded.delete(secret);
      const waiting = keepUp();
      if (waiting) await waiting;
      else if (slices.due()) await slices.pause();
    }
    out.raw('],"imports":').raw(importsText);
    if (page) out.raw(',"totalCount":').value(total);
    out.raw("}");
  };
  return { etag: digestTag(digest), produce };
};

export type ListStream = Awaited<ReturnType<typeof prepareListStream>>;
