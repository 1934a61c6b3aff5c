import { describe, expect, it } from "vitest";
import { dataKeyOf, generateDataKey } from "../../crypto/data-keys";
import { openSecretRow, sealFields } from "./secret-crypto";
import { tagLineOf } from "./secret-list-stream";
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
