import type { SecretDependencyNode, SecretReferenceNode } from "@keyward/contract";
import type { RequestContext } from "../../../context";
import { ForbiddenError, NotFoundError } from "../../../errors";
import { folderPathNotFound } from "../../folders/folder.service";
import { findProjectKey } from "../../project-keys/project-key.service";
import {
  assertCanDescribe,
  canDescribe,
  canReadValue,
  requireProjectPermission,
  secretObject,
  type ProjectRef,
} from "../secret-access";
import { openSecretValue, type PlainSecret } from "../secret-crypto";
import { findSecretAtPath } from "../secret.repository";
import { createSecretSource } from "../secret-source";
import { expandSecretValue, referenceForbidden } from "./expand";
import { listProjectSecretsWithPlace } from "./project-references.repository";
import { MAX_REFERENCE_DEPTH, referencesIn } from "./reference-syntax";

export type TreeQuery = ProjectRef & { environment: string; secretPath: string };
type Place = { environment: string; secretPath: string; key: string };

const placeId = (p: Place) => `${p.environment}\u0000${p.secretPath}\u0000${p.key}`;
const slugs = (secret: { tags: { slug: string }[] }) => secret.tags.map((t) => t.slug);

/** The project, the caller's ability and the secret a tree starts from (404 for a missing folder or secret). */
const rootOf = async (ctx: RequestContext, name: string, query: TreeQuery) => {
  const { project, ability } = await requireProjectPermission(ctx, query);
  const { place } = await findSecretAtPath(ctx.deps.db, project.id, query.environment, query.secretPath, name);
  if (!place?.folder_id) throw folderPathNotFound(query.secretPath, query.environment);
  if (!place.secret) throw new NotFoundError(`Secret with name '${name}' not found`);
  return { project, ability, row: place.secret };
};

/**
 * GET /api/v4/secrets/:name/secret-reference-tree: the secrets the value references, each with its
 * own stored value and references (depth ≤ 10; a secret already on the path is shown without
 * children), and the fully expanded value. Every secret in it needs read-value permission, as for
 * an expansion.
 */
export const getSecretReferenceTree = async (ctx: RequestContext, name: string, query: TreeQuery) => {
  const { project, ability, row } = await rootOf(ctx, name, query);
  const origin = { environment: query.environment, secretPath: query.secretPath, key: name };
  const source = createSecretSource(ctx, project.id);
  const [root] = await source.open([row]);
  if (!canReadValue(ability, secretObject(origin.environment, origin.secretPath, name, slugs(root!))))
    throw new ForbiddenError(
      `Unable to get secret reference tree for secret with key '${name}', because you don't have permission to view secret value.`,
    );

  const build = async (secret: PlainSecret, at: Place, depth: number, chain: Set<string>) => {
    const node: SecretReferenceNode = { ...at, value: secret.value(), children: [] };
    if (depth >= MAX_REFERENCE_DEPTH) return node;
    for (const ref of referencesIn(secret.value(), at)) {
      const place = { environment: ref.environment, secretPath: ref.secretPath, key: ref.key };
      const target = (await source.load(ref.environment, ref.secretPath))?.get(ref.key);
      if (!target) {
        node.children.push({ ...place, children: [] });
        continue;
      }
      if (!canReadValue(ability, secretObject(place.environment, place.secretPath, place.key, slugs(target))))
        throw referenceForbidden(place, origin);
      const id = placeId(place);
      node.children.push(
        chain.has(id)
          ? { ...place, value: target.value(), children: [] }
          : await build(target, place, depth + 1, new Set([...chain, id])),
      );
    }
    return node;
  };
  const tree = await build(root!, origin, 0, new Set([placeId(origin)]));
  const value = await expandSecretValue(
    root!.value(),
    { ...origin, skipMultilineEncoding: root!.skipMultilineEncoding },
    ability,
    source.load,
  );
  return { tree, value };
};

/**
 * GET /api/v4/secrets/:name/reference-dependency-tree: the secrets whose values reference this one,
 * then those referencing them, and so on (depth ≤ 10, each secret once per path). Secrets the
 * caller may not describe are left out with everything above them.
 */
export const getReferenceDependencyTree = async (ctx: RequestContext, name: string, query: TreeQuery) => {
  const { project, ability, row } = await rootOf(ctx, name, query);
  const origin = { environment: query.environment, secretPath: query.secretPath, key: name };
  assertCanDescribe(ability, secretObject(origin.environment, origin.secretPath, name, slugs(row)));

  const key = await findProjectKey(ctx.deps, project.id);
  const referrers = new Map<string, Place[]>();
  for (const secret of key ? await listProjectSecretsWithPlace(ctx.deps.db, project.id) : []) {
    const at = { environment: secret.env_slug, secretPath: secret.path, key: secret.key };
    if (!canDescribe(ability, secretObject(at.environment, at.secretPath, at.key, slugs(secret)))) continue;
    const value = openSecretValue(key!, secret);
    const targets = new Set(referencesIn(value, at).map((r) => placeId(r)));
    for (const target of targets) referrers.set(target, [...(referrers.get(target) ?? []), at]);
  }
  const order = (p: Place) => [p.environment, p.secretPath, p.key].join("\u0000");
  for (const list of referrers.values()) list.sort((x, y) => (order(x) < order(y) ? -1 : 1));
  const build = (at: Place, depth: number, chain: Set<string>): SecretDependencyNode => ({
    ...at,
    children:
      depth >= MAX_REFERENCE_DEPTH
        ? []
        : (referrers.get(placeId(at)) ?? []).map((next) =>
            chain.has(placeId(next))
              ? { ...next, children: [] }
              : build(next, depth + 1, new Set([...chain, placeId(next)])),
          ),
  });
  return { tree: build(origin, 0, new Set([placeId(origin)])) };
};
