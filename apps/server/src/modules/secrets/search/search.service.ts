import type { SecretSearchHit, SecretSearchResponse } from "@keyward/contract";
import { noteAudit, type RequestContext } from "../../../context";
import { getProjectPermission } from "../../authz/project-access";
import { SECRET_MANAGER } from "../../folders/folder.service";
import {
  assertMayDescribeSomeSecrets,
  canDescribe,
  canReadValue,
  mayDescribeSomeIn,
  secretObject,
} from "../secret-access";
import { createSecretSource } from "../secret-source";
import { decodeCursor, encodeCursor, keyFilterOf, pathFilterOf, type SearchCursor } from "./search-patterns";
import { listProjectFolders, searchSecretRows, type SearchFolder, type SearchRow } from "./search.repository";

export type SearchQuery = {
  key?: string;
  tag?: string[];
  path?: string;
  environment?: string;
  includeValues: boolean;
  limit: number;
  cursor?: string;
};

/**
 * Rows the exact check drops (conditions on names or tags) leave a page short; the next query then
 * asks for more at once. A request makes at most this many queries and then answers with what it
 * has and a cursor, so its work stays bounded whatever the caller's rules hide.
 */
const MAX_QUERIES = 3;
const MAX_TAKE = 1_000;

type Found = { row: SearchRow; folder: SearchFolder };

/**
 * GET /api/v1/projects/:projectId/secrets/search. The caller's rights narrow the query itself: only
 * folders where some secret may be described (environment and path conditions, forbids on whole
 * folders) are searched. Every row the query returns is then checked exactly (name and tag
 * conditions too) before it is shown, and a value only leaves when asked for and readable.
 */
export const searchSecrets = async (
  ctx: RequestContext,
  projectId: string,
  query: SearchQuery,
): Promise<SecretSearchResponse> => {
  const { project, ability } = await getProjectPermission(ctx, projectId, SECRET_MANAGER);
  assertMayDescribeSomeSecrets(ability);
  const key = query.key === undefined ? undefined : keyFilterOf(query.key);
  const pathMatches = query.path === undefined ? undefined : pathFilterOf(query.path);
  let after: SearchCursor | undefined = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
  noteAudit(ctx, {
    metadata: {
      ...(query.environment !== undefined ? { environment: query.environment } : {}),
      ...(query.path !== undefined ? { secretPath: query.path } : {}),
      includeValues: query.includeValues,
    },
  });

  const folders = (await listProjectFolders(ctx.deps.db, project.id, query.environment)).filter(
    (f) =>
      (pathMatches === undefined || pathMatches(f.path)) &&
      mayDescribeSomeIn(ability, { environment: f.environment, secretPath: f.path }),
  );
  const folderOf = new Map(folders.map((f) => [f.id, f]));
  const found: Found[] = [];
  let exhausted = folders.length === 0;
  let take = query.limit + 1;
  for (let n = 0; n < MAX_QUERIES && !exhausted && found.length <= query.limit; n++) {
    const rows = await searchSecretRows(ctx.deps.db, {
      projectId: project.id,
      folderIds: [...folderOf.keys()],
      key,
      tagSlugs: query.tag,
      after,
      take,
    });
    exhausted = rows.length < take;
    for (const row of rows) {
      const folder = folderOf.get(row.folder_id)!;
      const object = secretObject(
        folder.environment,
        folder.path,
        row.key,
        row.tags.map((t) => t.slug),
      );
      if (canDescribe(ability, object)) found.push({ row, folder });
      if (found.length > query.limit) break;
      after = { key: row.key, folderId: row.folder_id };
    }
    take = Math.min(MAX_TAKE, take * 4);
  }
  // More than a page found: the last one shown is where the next page starts after.
  const page = found.slice(0, query.limit);
  if (found.length > query.limit) {
    const last = page[page.length - 1]!.row;
    after = { key: last.key, folderId: last.folder_id };
  }
  const nextCursor = exhausted && found.length <= query.limit ? null : after ? encodeCursor(after) : null;
  return { secrets: await toHits(ctx, project.id, ability, page, query.includeValues), nextCursor };
};

const toHits = async (
  ctx: RequestContext,
  projectId: string,
  ability: Parameters<typeof canReadValue>[0],
  page: readonly Found[],
  includeValues: boolean,
): Promise<SecretSearchHit[]> => {
  const readable = includeValues
    ? page.filter(({ row, folder }) =>
        canReadValue(
          ability,
          secretObject(
            folder.environment,
            folder.path,
            row.key,
            row.tags.map((t) => t.slug),
          ),
        ),
      )
    : [];
  const opened = await createSecretSource(ctx, projectId).open(readable.map((f) => f.row));
  const valueOf = new Map(opened.map((secret) => [secret.id, secret]));
  return page.map(({ row, folder }) => {
    const secret = valueOf.get(row.id);
    return {
      id: row.id,
      secretKey: row.key,
      environment: folder.environment,
      secretPath: folder.path,
      folderId: folder.id,
      version: row.version,
      type: row.type,
      tags: row.tags.map((t) => ({ id: t.id, slug: t.slug, name: t.slug, color: t.color })),
      updatedAt: row.updated_at,
      secretValueHidden: secret === undefined,
      ...(secret ? { secretValue: secret.value() } : {}),
    };
  });
};
