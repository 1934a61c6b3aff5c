import type { SecretRead } from "@keyward/contract";
import type { RequestContext } from "../../context";
import { isUuid } from "../../db/errors";
import { BadRequestError, ForbiddenError, NotFoundError } from "../../errors";
import { folderPathNotFound } from "../folders/folder.service";
import {
  findProjectRow,
  getProjectPermissionForFetchedRow,
  getProjectPermissionForRow,
  prefetchProjectAccess,
} from "../authz/project-access";
import { SECRET_MANAGER } from "../folders/folder.service";
import { resolveImports } from "./imports/resolve-imports";
import { createExpander } from "./references/expand";
import {
  assertCanDescribe,
  canDescribe,
  canReadValue,
  denied,
  findProjectPermissionByRef,
  isPersonal,
  personalOwnerOf,
  secretObject,
  type ProjectRef,
  notePlace,
} from "./secret-access";
import { openVersionRow, type PlainSecret } from "./secret-crypto";
import { toSecretRead } from "./secret.dto";
import {
  findFolderPlace,
  findPersonalSecret,
  findSecretAtPath,
  findSecretWithPlace,
  type FolderAndSecret,
} from "./secret.repository";
import type { Ability, PermissionObject } from "../../permissions";
import { createSecretSource } from "./secret-source";
import { currentObjectOf } from "./versions/version-access";
import { findVersionByKey } from "./versions/version.repository";

export type GetQuery = ProjectRef & {
  environment?: string;
  secretPath: string;
  version?: number;
  type: "shared" | "personal";
  viewSecretValue: boolean;
  expandSecretReferences: boolean;
  include_imports?: boolean;
  includeImports?: boolean;
  includePersonalOverrides?: boolean;
};

const readForbidden = (name: string, imported: boolean) =>
  new ForbiddenError(
    `You do not have permission to view secret ${imported ? "import " : ""}value on secret with name '${name}'`,
    "ForbiddenReadSecretError",
  );

/** GET /api/v3/secrets/raw/:name and /api/v4/secrets/:name. */
export const getSecretByName = async (
  ctx: RequestContext,
  name: string,
  query: GetQuery,
  missingProjectMessage: string,
): Promise<SecretRead> => {
  if (query.projectId === undefined && query.workspaceId === undefined && query.workspaceSlug === undefined)
    throw new BadRequestError(missingProjectMessage);
  if (query.environment === undefined) throw new BadRequestError("Missing environment");
  const environment = query.environment;
  // By id, the project row comes with the place and the secret in one (batched) round trip; the
  // secret is read only once the permission check on that row has passed.
  const namedId = query.projectId ?? query.workspaceId;
  let project: { id: string };
  let ability: Ability;
  let place: FolderAndSecret | undefined;
  if (namedId !== undefined) {
    if (!isUuid(namedId)) throw new NotFoundError(`Project with ${namedId} not found`);
    // An actor without a cached ability here: their grants load beside the secret's lookup.
    const access = prefetchProjectAccess(ctx, namedId);
    const found = await findSecretAtPath(ctx.deps.db, namedId, environment, query.secretPath, name);
    ({ project, ability } = await getProjectPermissionForFetchedRow(
      ctx,
      namedId,
      found.project,
      SECRET_MANAGER,
      access,
    ));
    place = found.place;
  } else {
    ({ project, ability } = (await findProjectPermissionByRef(ctx, query))!);
    place = (await findSecretAtPath(ctx.deps.db, project.id, environment, query.secretPath, name)).place;
  }
  if (!place?.folder_id) throw folderPathNotFound(query.secretPath, environment);
  const folderId = place.folder_id;
  // A person reads their personal secret of the key in place of the shared one (unless told not to);
  // `type=personal` reads only that. Machine identities own none: a personal lookup finds nothing.
  const ownerId = personalOwnerOf(ctx.actor, query.type === "personal" || query.includePersonalOverrides);
  const source = createSecretSource(ctx, project.id, ctx.deps.db, ownerId);

  let found: PlainSecret | undefined;
  // An old version is read under the secret's classification now as well as then: a grant narrowed
  // by a later tag, rename or move narrows its history too.
  let current: PermissionObject | undefined;
  if (query.type === "shared" || ownerId !== undefined) {
    const personalOf = query.type === "personal" ? ownerId : undefined;
    if (query.version !== undefined) {
      const row = await findVersionByKey(ctx.deps.db, folderId, name, query.version, personalOf);
      const key = row ? await source.dataKey() : undefined;
      if (row && key) found = openVersionRow(key, row);
      if (row) current = await currentObjectOf(ctx.deps.db, row.secret_id);
    } else {
      const personal =
        ownerId !== undefined && (query.type === "personal" || place.secret)
          ? await findPersonalSecret(ctx.deps.db, folderId, name, ownerId)
          : undefined;
      const row = personal ?? (query.type === "shared" ? place.secret : undefined);
      if (row) [found] = await source.open([row]);
    }
  }
  const tagsOf = (s: PlainSecret | undefined) => s?.tags.map((t) => t.slug) ?? [];
  notePlace(ctx, { environment, secretPath: query.secretPath });
  assertCanDescribe(ability, secretObject(environment, query.secretPath, name, tagsOf(found)));
  if (current) assertCanDescribe(ability, current);
  const expand = query.expandSecretReferences && query.viewSecretValue;

  if (!found && (query.includeImports ?? query.include_imports ?? false)) {
    // Last import first; within one, its own secrets then its imports' (the CLI's precedence).
    const groups = await resolveImports(ctx.deps.db, [folderId], query.type === "shared" ? ownerId : undefined);
    for (const group of groups.reverse()) {
      const match = group.secrets.find(
        (s) =>
          s.row.key === name &&
          canDescribe(
            ability,
            secretObject(
              s.environment,
              s.secretPath,
              s.row.key,
              s.row.tags.map((t) => t.slug),
            ),
          ),
      );
      if (!match) continue;
      const [secret] = await source.open([match.row]);
      const placeOf = { projectId: project.id, environment: match.environment, secretPath: match.secretPath };
      const object = secretObject(match.environment, match.secretPath, name, tagsOf(secret));
      if (!query.viewSecretValue && !isPersonal(secret!)) return toSecretRead(secret!, placeOf, { hidden: true });
      if (!isPersonal(secret!) && !canReadValue(ability, object)) throw readForbidden(name, true);
      const value = expand
        ? await createExpander(ability, source.load).expand(secret!.value(), {
            environment: match.environment,
            secretPath: match.secretPath,
            key: name,
            skipMultilineEncoding: secret!.skipMultilineEncoding,
          })
        : secret!.value();
      return toSecretRead(secret!, placeOf, { hidden: false, value });
    }
  }
  if (!found) throw new NotFoundError(`Secret with name '${name}' not found`);

  const placeOf = { projectId: project.id, environment, secretPath: query.secretPath };
  if (!isPersonal(found)) {
    if (!query.viewSecretValue) return toSecretRead(found, placeOf, { hidden: true });
    if (
      !canReadValue(ability, secretObject(environment, query.secretPath, name, tagsOf(found))) ||
      (current && !canReadValue(ability, current))
    )
      throw readForbidden(name, false);
  }
  const value = expand
    ? await createExpander(ability, source.load).expand(found.value(), {
        environment,
        secretPath: query.secretPath,
        key: name,
        skipMultilineEncoding: found.skipMultilineEncoding,
      })
    : found.value();
  return toSecretRead(found, placeOf, { hidden: false, value });
};

/** GET …/raw/id/:id and /api/v4/secrets/id/:id: read-value is required. */
export const getSecretById = async (ctx: RequestContext, secretId: string) => {
  const notFound = new NotFoundError(`Secret with ID '${secretId}' not found`);
  const row = isUuid(secretId) ? await findSecretWithPlace(ctx.deps.db, secretId) : undefined;
  const project = row ? await findProjectRow(ctx.deps.db, row.project_id) : undefined;
  if (!row || !project || project.org_id !== ctx.actor.orgId) throw notFound;
  const { ability } = await getProjectPermissionForRow(ctx, project, SECRET_MANAGER);
  const own = isPersonal(row);
  if (own && row.user_id !== ctx.actor.id) throw new ForbiddenError("You are not allowed to access this secret");
  const place = await findFolderPlace(ctx.deps.db, row.folder_id);
  if (!place) throw new NotFoundError(`Folder with id '${row.folder_id}' not found`);
  const object = secretObject(
    row.env_slug,
    place.path,
    row.key,
    row.tags.map((t) => t.slug),
  );
  // Its owner reads a personal secret they may describe; anything else needs read-value.
  if (own) assertCanDescribe(ability, object);
  else if (!canReadValue(ability, object)) throw denied(ability, "readValue");
  const [secret] = await createSecretSource(ctx, project.id).open([row]);
  const { secretValueHidden: _hidden, ...dto } = toSecretRead(
    secret!,
    { projectId: project.id, environment: row.env_slug, secretPath: place.path },
    { hidden: false },
  );
  return dto;
};
