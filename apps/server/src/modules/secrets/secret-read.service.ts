import type { MetadataFilter, SecretImportResult, SecretRead } from "@keyward/contract";
import type { RequestContext } from "../../context";
import { EncodedJson, JsonWriter, StreamedJson } from "../../http/json-response";
import { cooperative } from "../../lib/cooperative";
import { BadRequestError, NotFoundError, ServiceUnavailableError } from "../../errors";
import type { Ability } from "../../permissions";
import { readFoldersWithImports, type ImportGroup } from "./imports/resolve-imports";
import { createExpander, type Expander } from "./references/expand";
import { expandAll, expandEach, visibleValue, withValue } from "./list-expansion";
import {
  assertMayDescribeSomeSecrets,
  canDescribe,
  canReadValue,
  denied,
  findProjectPermissionByRef,
  isPersonal,
  personalOwnerOf,
  secretObject,
  type ProjectRef,
} from "./secret-access";
import { forgetPlaintext, type PlainSecret } from "./secret-crypto";
import { toImportedSecret, toSecretRead } from "./secret.dto";
import { listFolderTree, resolveFolder, type SecretRow } from "./secret.repository";
import { createSecretSource, listVisibleSecretsOfFolders, type SecretSource } from "./secret-source";
import { prepareListStream } from "./secret-list-stream";
import type { ReferenceFreeMemo } from "./reference-free";
import type { SecretListsState } from "./secrets.state";

export type ListQuery = ProjectRef & {
  environment?: string;
  secretPath: string;
  viewSecretValue: boolean;
  expandSecretReferences: boolean;
  recursive: boolean;
  include_imports?: boolean;
  includeImports?: boolean;
  /** A person's personal secrets stand in for the shared ones of their keys unless this is false. */
  includePersonalOverrides?: boolean;
  tagSlugs?: string[];
  metadataFilter?: MetadataFilter[];
  /** v4 paging: the page's first secret in the unpaged order, and how many (see pageOf). */
  offset?: number;
  limit?: number;
};

type Page = { offset: number; limit: number };

/**
 * The page asked for, if any. Paging counts the folder's own secrets the caller may see, in the
 * unpaged order (folder, then key); the imports come with the first page only.
 */
const pageOf = (query: ListQuery): Page | undefined => {
  if (query.limit === undefined) {
    if (query.offset !== undefined) throw new BadRequestError("offset needs limit");
    return undefined;
  }
  return { offset: query.offset ?? 0, limit: query.limit };
};

/**
 * The rest of `{"secrets":[…],"imports":[…]}` after the secrets, as JSON.stringify would write the
 * object; a paged answer carries the count of the caller's secrets it was cut from.
 */
const close = (out: JsonWriter, page: Page | undefined, imports: SecretImportResult[], total: number) => {
  out.raw('],"imports":').value(imports);
  if (page) out.raw(',"totalCount":').value(total);
  return out.raw("}").end();
};

const matchesMetadata = (secret: PlainSecret, filters: readonly MetadataFilter[]) =>
  filters.every((f) =>
    secret.metadata.some(
      (m) => (f.key === undefined || m.key === f.key) && (f.value === undefined || m.value === f.value),
    ),
  );

/**
 * Imported secrets filtered by the caller's permission on their source: describe, and read-value
 * too when values are asked for; the rest are dropped silently.
 */
const importResults = async (
  groups: readonly ImportGroup[],
  ability: Ability,
  source: SecretSource,
  expander: Expander | undefined,
  query: { viewSecretValue: boolean; expandSecretReferences: boolean },
): Promise<SecretImportResult[]> => {
  const out: SecretImportResult[] = [];
  for (const group of groups) {
    const seenKeys = new Set<string>();
    const kept = group.secrets.filter(({ row, environment, secretPath }) => {
      if (query.expandSecretReferences) {
        if (seenKeys.has(row.key)) return false;
        seenKeys.add(row.key);
      }
      const object = secretObject(
        environment,
        secretPath,
        row.key,
        row.tags.map((t) => t.slug),
      );
      return (
        canDescribe(ability, object) && (!query.viewSecretValue || isPersonal(row) || canReadValue(ability, object))
      );
    });
    const opened = await source.open(kept.map((k) => k.row));
    const secrets = await expandAll(
      opened.map((secret, i) => ({ secret, ...kept[i]! })),
      ({ secret, environment, secretPath }) => {
        if (!query.viewSecretValue && !isPersonal(secret))
          return toImportedSecret(secret, environment, { hidden: true });
        return withValue(visibleValue(secret, { environment, secretPath }, expander), (value) =>
          toImportedSecret(secret, environment, { hidden: false, value }),
        );
      },
    );
    out.push({
      secretPath: group.secretPath,
      environment: group.environment,
      ...(group.folderId ? { folderId: group.folderId } : {}),
      secrets,
    });
  }
  return out;
};

/** GET /api/v3/secrets/raw and /api/v4/secrets: the body, encoded (a SecretListPage). */
export const listSecrets = async (ctx: RequestContext, query: ListQuery): Promise<EncodedJson | StreamedJson> => {
  const named = query.projectId ?? query.workspaceId ?? query.workspaceSlug;
  if (named === undefined || query.environment === undefined)
    throw new BadRequestError("Missing project id or environment");
  const page = pageOf(query);
  const { project, ability } = (await findProjectPermissionByRef(ctx, query))!;
  assertMayDescribeSomeSecrets(ability);
  const environment = query.environment;
  const place = await resolveFolder(ctx.deps.db, project.id, environment, query.secretPath);
  if (query.recursive && !place)
    throw new NotFoundError(`Environment with slug '${environment}' in project with ID ${project.id} not found`);
  if (!place?.folder_id) return close(new JsonWriter().raw('{"secrets":['), page, [], 0);
  const rootId = place.folder_id;
  const folders = [
    { id: rootId, path: query.secretPath },
    ...(query.recursive ? await listFolderTree(ctx.deps.db, rootId, query.secretPath) : []),
  ];
  // A page after the first carries no imports: they are not even read.
  const withImports = (query.includeImports ?? query.include_imports ?? false) && (page?.offset ?? 0) === 0;
  const ownerId = personalOwnerOf(ctx.actor, query.includePersonalOverrides);
  const source = createSecretSource(ctx, project.id, ctx.deps.db, ownerId);

  const folderIds = folders.map((f) => f.id);
  // A list last seen large waits for its turn before its rows are read (see SecretListsState).
  const lists = ctx.deps.secretLists;
  const listKey = `${rootId}:${query.recursive}:${page ? "paged" : "whole"}`;
  const seen = lists.seenLarge.get(listKey) ?? (await lists.sizing.get(listKey));
  let release = seen ? await enterLargeList(lists) : undefined;
  // The first request for a list not seen yet learns its size for the others (a promise only then).
  let learnt: ((large: boolean) => void) | undefined;
  if (seen === undefined && !lists.sizing.has(listKey))
    lists.sizing.set(listKey, new Promise<boolean>((resolve) => (learnt = resolve)));
  try {
    const { rows, groups } = withImports
      ? await readFoldersWithImports(ctx.deps.db, folderIds, ownerId)
      : { rows: await listVisibleSecretsOfFolders(ctx.deps.db, folderIds, ownerId), groups: [] };
    const large = (page ? Math.min(page.limit, rows.length) : rows.length) > lists.largeRows;
    if (seen !== large) lists.seenLarge.set(listKey, large);
    if (learnt) {
      lists.sizing.delete(listKey);
      learnt(large);
      learnt = undefined;
    }
    if (large && !release) release = await enterLargeList(lists);
    const projectId = project.id;
    const { referenceFree } = lists;
    const read = { page, projectId, rootId, environment, folders, source, rows, groups, ability, large, referenceFree };
    const body = await writeList(query, read);
    if (body instanceof EncodedJson) return body;
    // A streamed list keeps its turn until it is written (or cut, or answered 304).
    const done = release;
    release = undefined;
    return new StreamedJson(body.etag, body.produce, {
      release: () => done?.(),
      failed: (error) => ctx.deps.logger.error({ err: error }, "a streamed secret list was cut"),
    });
  } finally {
    if (learnt) {
      lists.sizing.delete(listKey);
      learnt(false);
    }
    release?.();
  }
};

/** A turn to build a large list, or 503 with Retry-After when none comes within the queue's deadline. */
const enterLargeList = async (lists: SecretListsState) => {
  const release = await lists.gate.enter();
  if (release) return release;
  throw new ServiceUnavailableError(
    "Too many large secret lists are being built at once; please retry shortly",
    lists.gate.retryAfterSeconds(),
  );
};

/** The rows of the folders asked for, filtered by the caller's rights, opened, expanded and written. */
const writeList = async (
  query: ListQuery,
  read: {
    page: Page | undefined;
    projectId: string;
    rootId: string;
    environment: string;
    folders: readonly { id: string; path: string }[];
    source: SecretSource;
    rows: SecretRow[];
    groups: ImportGroup[];
    ability: Ability;
    /** Streamed (see prepareListStream) rather than encoded whole. */
    large: boolean;
    referenceFree: ReferenceFreeMemo;
  },
) => {
  const { page, projectId, rootId, environment, folders, source, rows, groups, ability } = read;
  const pathOf = new Map(folders.map((f) => [f.id, f.path]));
  const placeOfFolder = new Map(folders.map((f) => [f.id, { projectId, environment, secretPath: f.path }]));
  // Rows come by folder: one pass groups them (a recursive list of many folders stays linear).
  const rowsOf = new Map<string, SecretRow[]>(folders.map((f) => [f.id, []]));
  for (const row of rows) rowsOf.get(row.folder_id)?.push(row);
  for (const folder of folders) source.seed(environment, folder.path, rowsOf.get(folder.id)!);
  const tagSlugs = query.tagSlugs ?? [];
  const slices = cooperative();
  const selected: SecretRow[] = [];
  for (const row of rows) {
    if (slices.due()) await slices.pause();
    if (tagSlugs.length > 0 && !row.tags.some((t) => tagSlugs.includes(t.slug))) continue;
    const object = secretObject(
      environment,
      pathOf.get(row.folder_id)!,
      row.key,
      row.tags.map((t) => t.slug),
    );
    if (!canDescribe(ability, object)) continue;
    if (query.viewSecretValue && !isPersonal(row) && !canReadValue(ability, object)) {
      // In the folder asked for, an unreadable value fails the request; below it, the secret is left out.
      if (row.folder_id === rootId) throw denied(ability, "readValue");
      continue;
    }
    selected.push(row);
  }
  // One expander for the whole answer: a secret referenced from many places is expanded once.
  const expander = query.expandSecretReferences ? createExpander(ability, source.load) : undefined;
  // Only a metadata filter needs every selected row opened before the page is cut.
  const cut = <T>(items: T[]) => (page ? items.slice(page.offset, page.offset + page.limit) : items);
  const filters = query.metadataFilter ?? [];
  let listed = selected;
  if (filters.length > 0) {
    const all = await source.open(selected);
    listed = selected.filter((_, i) => matchesMetadata(all[i]!, filters));
  }
  const total = listed.length;
  listed = cut(listed);

  const imports = importResults(groups, ability, source, expander, query);
  // Awaited below; a list refused before that (an expansion's 403) leaves no rejection unheard.
  imports.catch(() => undefined);
  if (read.large) {
    const { viewSecretValue } = query;
    const open = await source.opener();
    const { referenceFree } = read;
    return prepareListStream({
      rows: listed,
      open,
      referenceFree,
      places: placeOfFolder,
      viewSecretValue,
      expander,
      imports,
      page,
      total,
    });
  }
  const opened = await source.open(listed);
  // Written as they are built: the list's objects and text never exist whole (see JsonWriter).
  const out = new JsonWriter().raw('{"secrets":[');
  let first = true;
  await expandEach(
    opened,
    (secret): SecretRead | Promise<SecretRead> => {
      const placeOf = placeOfFolder.get(secret.folderId)!;
      if (!query.viewSecretValue && !isPersonal(secret)) return toSecretRead(secret, placeOf, { hidden: true });
      return withValue(visibleValue(secret, { environment, secretPath: placeOf.secretPath }, expander), (value) =>
        toSecretRead(secret, placeOf, { hidden: false, value }),
      );
    },
    (read, secret) => {
      out.raw(first ? "" : ",").value(read);
      first = false;
      forgetPlaintext(secret);
    },
    slices,
  );
  return close(out, page, await imports, total);
};
