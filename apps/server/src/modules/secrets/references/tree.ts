import type { SecretDependencyNode, SecretReferenceNode } from "@keyward/contract";
import type { RequestContext } from "../../../context";
import { ForbiddenError, NotFoundError, UnprocessableEntityError } from "../../../errors";
import { folderPathNotFound } from "../../folders/folder.service";
import { findProjectKey } from "../../project-keys/project-key.service";
import {
  assertCanDescribe,
  canDescribe,
  canReadValue,
  getProjectPermissionByRef,
  secretObject,
  type ProjectRef,
} from "../secret-access";
import { openSecretValue, type PlainSecret } from "../secret-crypto";
import { findSecretAtPath } from "../secret.repository";
import { createSecretSource } from "../secret-source";
import { createExpander, placeId, referenceForbidden, type Origin } from "./expand";
import { listProjectSecretsWithPlace } from "./project-references.repository";
import { MAX_REFERENCE_DEPTH, referencesIn } from "./reference-syntax";

export type TreeQuery = ProjectRef & { environment: string; secretPath: string };
type Place = Origin;
const slugs = (secret: { tags: { slug: string }[] }) => secret.tags.map((t) => t.slug);

/** The project, the caller's ability and the secret a tree starts from (404 for a missing folder or secret). */
const rootOf = async (ctx: RequestContext, name: string, query: TreeQuery) => {
  const { project, ability } = await getProjectPermissionByRef(ctx, query);
  const { place } = await findSecretAtPath(ctx.deps.db, project.id, query.environment, query.secretPath, name);
  if (!place?.folder_id) throw folderPathNotFound(query.secretPath, query.environment);
  if (!place.secret) throw new NotFoundError(`Secret with name '${name}' not found`);
  return { project, ability, row: place.secret };
};

/** The most nodes a tree answer holds; a larger graph answers 422. */
export const MAX_TREE_NODES = 10_000;

/** Counts the nodes of one tree answer against MAX_TREE_NODES. */
const nodeBudget = (name: string) => {
  let nodes = 0;
  return () => {
    nodes += 1;
    if (nodes > MAX_TREE_NODES)
      throw new UnprocessableEntityError(
        `The reference tree of secret '${name}' has more than ${MAX_TREE_NODES} nodes; read the secrets it references one at a time`,
      );
  };
};

/**
 * GET /api/v4/secrets/:name/secret-reference-tree: the secrets the value references, each with its
 * own stored value and references (depth ≤ 10), and the fully expanded value. Each secret's
 * references are shown once, where it first appears depth-first; later it appears as a leaf, as
 * does a secret already on the path. Every secret in it needs read-value permission, as for an
 * expansion.
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

  const count = nodeBudget(name);
  const shown = new Set([placeId(origin)]);
  const build = async (secret: PlainSecret, at: Place, depth: number) => {
    count();
    const node: SecretReferenceNode = { ...at, value: secret.value(), children: [] };
    if (depth >= MAX_REFERENCE_DEPTH) return node;
    for (const ref of referencesIn(secret.value(), at)) {
      const place = { environment: ref.environment, secretPath: ref.secretPath, key: ref.key };
      const target = (await source.load(ref.environment, ref.secretPath))?.get(ref.key);
      if (!target) {
        count();
        node.children.push({ ...place, children: [] });
        continue;
      }
      if (!canReadValue(ability, secretObject(place.environment, place.secretPath, place.key, slugs(target))))
        throw referenceForbidden(place, origin);
      const id = placeId(place);
      if (shown.has(id)) {
        count();
        node.children.push({ ...place, value: target.value(), children: [] });
      } else {
        shown.add(id);
        node.children.push(await build(target, place, depth + 1));
      }
    }
    return node;
  };
  const tree = await build(root!, origin, 0);
  const value = await createExpander(ability, source.load).expand(root!.value(), {
    ...origin,
    skipMultilineEncoding: root!.skipMultilineEncoding,
  });
  return { tree, value };
};

/**
 * GET /api/v4/secrets/:name/reference-dependency-tree: the secrets whose values reference this one,
 * then those referencing them, and so on (depth ≤ 10); each secret's referrers are shown once,
 * where it first appears depth-first, and later as a leaf. Secrets the caller may not describe are
 * left out with everything above them.
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
    for (const target of targets) {
      const list = referrers.get(target);
      if (list) list.push(at);
      else referrers.set(target, [at]);
    }
  }
  const order = (p: Place) => [p.environment, p.secretPath, p.key].join("\u0000");
  for (const list of referrers.values()) list.sort((x, y) => (order(x) < order(y) ? -1 : 1));
  const count = nodeBudget(name);
  const shown = new Set([placeId(origin)]);
  const build = (at: Place, depth: number): SecretDependencyNode => {
    count();
    const node: SecretDependencyNode = { ...at, children: [] };
    if (depth >= MAX_REFERENCE_DEPTH) return node;
    for (const next of referrers.get(placeId(at)) ?? []) {
      const id = placeId(next);
      if (shown.has(id)) {
        count();
        node.children.push({ ...next, children: [] });
      } else {
        shown.add(id);
        node.children.push(build(next, depth + 1));
      }
    }
    return node;
  };
  return { tree: build(origin, 0) };
};
