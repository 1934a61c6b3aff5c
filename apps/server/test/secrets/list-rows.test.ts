import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { listSecretsOfFolders } from "../../src/modules/secrets/secret-list.repository";
import { createFolder, insertOrgUser } from "../helpers/structure";
import { createSecretsScope } from "./helpers";

/**
 * The list's read sends what repeats from row to row once (the folder, the actor, the type as one
 * character, empty metadata and tags as null) and fills it in: the rows must be exactly those stored.
 */
describe("the rows a list reads", () => {
  it("are the rows as stored, across folders, actors, personal rows, metadata and tags", async () => {
    const scope = await createSecretsScope();
    const { tenant, projectId } = scope;
    const { db } = tenant.app.deps;
    const [a, b] = [
      await createFolder(tenant, projectId, "dev", "/", "a"),
      await createFolder(tenant, projectId, "dev", "/", "b"),
    ];
    const owner = await insertOrgUser(tenant);
    const [alice, bot] = [randomUUID(), randomUUID()];
    const tag = await db
      .insertInto("secret_tags")
      .values({ project_id: projectId, slug: "db", color: "red" })
      .returning("id")
      .executeTakeFirstOrThrow();
    // Actors change, repeat, and are absent (first row included); the type, metadata and tags vary.
    const rows: [string, string, string, string | null, string | null, string | null, unknown[]][] = [
      [a.id, "A1", "shared", null, null, null, []],
      [a.id, "A1", "personal", owner.id, alice, "user", []],
      [a.id, "A2", "shared", null, alice, "user", [{ key: "team", value: "core", isEncrypted: false }]],
      [a.id, "A3", "shared", null, alice, "identity", []],
      [a.id, "A4", "shared", null, bot, "identity", []],
      [b.id, "B1", "shared", null, bot, "identity", []],
      [b.id, "B2", "shared", null, null, null, []],
      [b.id, "B3", "shared", null, null, null, []],
      [b.id, "B4", "shared", null, alice, "user", []],
    ];
    for (const [folder_id, key, type, user_id, actor_id, actor_type, metadata] of rows)
      await db
        .insertInto("secrets")
        .values({
          id: randomUUID(),
          folder_id,
          key,
          type,
          user_id,
          encrypted_fields: `d1:${key}${type}`,
          encrypted_value: null,
          encrypted_comment: null,
          skip_multiline_encoding: false,
          reminder_note: null,
          reminder_repeat_days: null,
          metadata: JSON.stringify(metadata),
          actor_id,
          actor_type,
        })
        .execute();
    await sql`insert into secret_tag_links (secret_id, tag_id)
      select id, ${tag.id}::uuid from secrets where key = 'B1'`.execute(db);

    const { rows: stored } = await sql<Record<string, unknown>>`
      select s.id, s.folder_id, s.key, s.type, s.user_id, s.actor_id, s.actor_type, s.metadata,
        coalesce((select json_agg(json_build_object('id', t.id, 'slug', t.slug, 'color', t.color))
          from secret_tag_links l join secret_tags t on t.id = l.tag_id where l.secret_id = s.id), '[]'::json) as tags
      from secrets s where s.folder_id in (${a.id}, ${b.id})
      order by s.folder_id, s.key, s.type desc`.execute(db);
    const pick = (row: Record<string, unknown>) =>
      Object.fromEntries(
        ["id", "folder_id", "key", "type", "user_id", "actor_id", "actor_type", "metadata", "tags"].map((k) => [
          k,
          row[k],
        ]),
      );

    const listed = await listSecretsOfFolders(db, [a.id, b.id], owner.id);
    expect(listed.map(pick)).toEqual(stored.map(pick));
    expect(listed.find((r) => r.key === "B1")!.tags).toEqual([{ id: tag.id, slug: "db", color: "red" }]);
    // Without an owner the personal row is left out, and the rest stay the same.
    const shared = await listSecretsOfFolders(db, [b.id, a.id]);
    expect(shared.map(pick)).toEqual(stored.filter((r) => r.type === "shared").map(pick));
    // Rows without metadata or tags share one frozen empty array: nothing may change it in place.
    expect(Object.isFrozen(shared.find((r) => r.key === "A2")!.tags)).toBe(true);
  });
});
