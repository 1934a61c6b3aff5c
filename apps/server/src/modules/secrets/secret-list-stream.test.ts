import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { dataKeyOf, generateDataKey } from "../../crypto/data-keys";
import { JsonWriter } from "../../http/json-response";
import { buildAbility } from "../../permissions";
import { createReferenceFreeMemo } from "./reference-free";
import { createExpander } from "./references/expand";
import { openSecretRow, sealFields } from "./secret-crypto";
import { prepareListStream, tagLineOf } from "./secret-list-stream";
import { toSecretRead, type Place } from "./secret.dto";
import type { SecretRow } from "./secret.repository";

const key = dataKeyOf("k1", generateDataKey());
const place: Place = { projectId: "p1", environment: "dev", secretPath: "/big" };

const rowOf = (change: Partial<SecretRow> = {}, fields = { value: "v", comment: "c" }): SecretRow => ({
  id: "00000000-0000-4000-8000-000000000001",
  folder_id: "f1",
  key: "K",
  type: "shared",
  user_id: null,
  version: 3,
  ...sealFields(key, "secrets", "00000000-0000-4000-8000-000000000001", { ...fields, metadata: [] }),
  skip_multiline_encoding: false,
  reminder_note: null,
  reminder_repeat_days: null,
  actor_id: null,
  actor_type: null,
  created_at: "2026-12-01T00:00:00.000Z",
  updated_at: "2026-12-02T00:00:00.000Z",
  tags: [],
  ...change,
});
const lineOf = (row: SecretRow, at: Place = place, expanded?: string) => tagLineOf(row, at, expanded);

describe("a streamed list's tag line", () => {
  it("covers every field of the secret a list writes", () => {
    // A field added to the list's DTO must be added to tagLineOf too (and here), or a 304 could hide it.
    expect(Object.keys(toSecretRead(openSecretRow(key, rowOf()), place, { hidden: true }))).toEqual([
      "id",
      "_id",
      "workspace",
      "environment",
      "version",
      "type",
      "secretKey",
      "secretValue",
      "secretComment",
      "secretReminderNote",
      "secretReminderRepeatDays",
      "skipMultilineEncoding",
      "createdAt",
      "updatedAt",
      "actor",
      "isRotatedSecret",
      "rotationId",
      "secretValueHidden",
      "secretPath",
      "tags",
      "secretMetadata",
    ]);
    const base = rowOf();
    const lines = [
      lineOf(base),
      lineOf(rowOf({ id: "00000000-0000-4000-8000-000000000002" })),
      lineOf(rowOf({ version: 4 })),
      lineOf(rowOf({ type: "personal" })),
      lineOf(rowOf({ key: "K2" })),
      lineOf(base, { ...place, projectId: "p2" }),
      lineOf(base, { ...place, environment: "prod" }),
      lineOf(base, { ...place, secretPath: "/other" }),
      lineOf(rowOf({ skip_multiline_encoding: true })),
      lineOf(rowOf({ reminder_note: "rotate" })),
      lineOf(rowOf({ reminder_repeat_days: 30 })),
      lineOf(rowOf({ actor_id: "a1" })),
      lineOf(rowOf({ actor_id: "a1", actor_type: "user" })),
      lineOf(rowOf({ created_at: "2026-12-01T00:00:00.001Z" })),
      lineOf(rowOf({ updated_at: "2026-12-02T00:00:00.001Z" })),
      lineOf(rowOf({ tags: [{ id: "t1", slug: "db", color: "red" }] })),
      lineOf(rowOf({ tags: [{ id: "t1", slug: "db", color: "blue" }] })),
      lineOf(rowOf({ metadata: [{ key: "team", value: "core", isEncrypted: false }] })),
      lineOf(rowOf({}, { value: "v2", comment: "c" })),
      lineOf(rowOf({}, { value: "v", comment: "c2" })),
      lineOf(base, place, "expanded"),
    ];
    expect(new Set(lines).size).toBe(lines.length);
  });

  it("never holds the value or the comment in clear", () => {
    const line = lineOf(rowOf({}, { value: "plain-value-123", comment: "plain-comment-456" }));
    expect(line).not.toContain("plain-value-123");
    expect(line).not.toContain("plain-comment-456");
  });
});

/** The collector, on demand: the one way to see that nothing holds a row any more. */
const collectGarbage = () => {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
};

// Made out here, as the server's is (see rowOpener): a closure made inside streamOf would keep its scope.
const opener = {
  secret: (row: SecretRow) => openSecretRow(key, row),
  value: (row: SecretRow) => openSecretRow(key, row).value(),
};

describe("a streamed list's memory", () => {
  /**
   * A list of `count` rows made ready to stream, with an expander whose folder loader holds every row (as
   * a request's source does); only the stream and weak references to the rows leave this function.
   */
  const streamOf = async (count: number) => {
    // One id for all (the sealed fields are bound to it); the keys tell the rows apart.
    const rows = Array.from({ length: count }, (_, i) => rowOf({ key: `K_${i}` }));
    const index = new Map(rows.map((row) => [row.key, row]));
    const ability = buildAbility([{ subject: "secrets", action: ["describeSecret", "readValue"], inverted: false }]);
    const expander = createExpander(ability, () =>
      Promise.resolve({ get: (k) => index.get(k) && openSecretRow(key, index.get(k)!) }),
    );
    const stream = await prepareListStream({
      rows,
      open: opener,
      referenceFree: createReferenceFreeMemo(),
      places: new Map([["f1", place]]),
      viewSecretValue: true,
      expander,
      imports: Promise.resolve([]),
      page: undefined,
      total: count,
    });
    return { stream, rows: rows.map((row) => new WeakRef(row)) };
  };

  it("lets each row go once written, though the list's expander holds every row", async () => {
    const gc = collectGarbage();
    const { stream, rows } = await streamOf(40);
    let writes = 0;
    let resume: (() => void) | undefined;
    const written = stream.produce({
      out: new JsonWriter(() => undefined),
      keepUp: () => ((writes += 1) === 20 ? new Promise<void>((done) => (resume = done)) : undefined),
    });
    while (!resume) await new Promise(setImmediate);
    // A weak reference keeps its target through the job that made it or last read it: collect in a later
    // one, and give the collector a few turns (what still holds a row holds it through all of them).
    const alive = (from: number, to: number) => rows.slice(from, to).filter((row) => row.deref() !== undefined);
    for (let turn = 0; turn === 0 || (turn < 10 && alive(0, 19).length > 0); turn += 1) {
      await new Promise(setImmediate);
      gc();
    }
    // Paused after writing the 20th: the writer's own frame still holds that one.
    expect(alive(0, 19)).toHaveLength(0);
    expect(alive(20, 40)).toHaveLength(20);
    resume();
    await written;
  });
});
