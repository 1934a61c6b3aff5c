import type { RequestContext } from "../../../context";
import type { DataKey } from "../../../crypto/data-keys";
import type { Tx } from "../../../db/transaction";
import type { Ability } from "../../../permissions";
import { secretObject } from "../secret-access";
import { openSecretRow, openSecretValue } from "../secret-crypto";
import { stateOf, writeSecretUpdate } from "../secret-persist";
import { listProjectSecretsWithPlace, lockSecretsByIds } from "./project-references.repository";
import { REFERENCE, parseReference } from "./reference-syntax";

export type SecretPlace = { environment: string; secretPath: string; key: string };
type Folder = { environment: string; secretPath: string };

const placeId = (p: SecretPlace) => `${p.environment}\u0000${p.secretPath}\u0000${p.key}`;

/**
 * How a secret in `origin` names `target`: a local reference stays local while the target is still
 * in the same folder; anything else is written out as `env.a.b.KEY`.
 */
const referenceText = (target: SecretPlace, origin: Folder, wasLocal: boolean) =>
  wasLocal && target.environment === origin.environment && target.secretPath === origin.secretPath
    ? target.key
    : [target.environment, ...target.secretPath.split("/").filter((s) => s.length > 0), target.key].join(".");

/** The value with every reference to a moved place pointing at its new place; undefined when none changed. */
export const rewriteReferences = (value: string, origin: Folder, moved: ReadonlyMap<string, SecretPlace>) => {
  if (!value.includes("${")) return undefined;
  let changed = false;
  const next = value.replace(REFERENCE, (whole, body: string) => {
    const ref = parseReference(body, origin);
    const target = ref ? moved.get(placeId(ref)) : undefined;
    if (!target) return whole;
    changed = true;
    return `\${${referenceText(target, origin, !body.includes("."))}}`;
  });
  return changed ? next : undefined;
};

export type Relocation = { from: SecretPlace; to: SecretPlace };

/**
 * After a rename or a move, rewrites the references to the old places in every other secret of the
 * project, each as a new version. Only secrets the caller may edit are rewritten:
 * the others keep their text (a rename must not write where the caller cannot), and are counted.
 */
export const rewriteDependents = async (
  ctx: RequestContext,
  trx: Tx,
  key: DataKey,
  ability: Ability,
  projectId: string,
  relocations: readonly Relocation[],
  exclude: ReadonlySet<string> = new Set(),
) => {
  if (relocations.length === 0) return { rewritten: 0, skipped: 0 };
  const moved = new Map(relocations.map((r) => [placeId(r.from), r.to]));
  const places = new Map<string, Folder>();
  let skipped = 0;
  for (const row of await listProjectSecretsWithPlace(trx, projectId)) {
    if (exclude.has(row.id)) continue;
    const origin = { environment: row.env_slug, secretPath: row.path };
    const value = openSecretValue(key, row);
    if (rewriteReferences(value, origin, moved) === undefined) continue;
    const tags = row.tags.map((t) => t.slug);
    if (ability.can("edit", "secrets", secretObject(origin.environment, origin.secretPath, row.key, tags)))
      places.set(row.id, origin);
    else skipped += 1;
  }
  let rewritten = 0;
  for (const row of await lockSecretsByIds(trx, [...places.keys()])) {
    const origin = places.get(row.id)!;
    const before = stateOf(openSecretRow(key, row));
    // Checked again on the locked row: its name or tags may have changed since the scan.
    const object = secretObject(
      origin.environment,
      origin.secretPath,
      before.key,
      before.tags.map((t) => t.slug),
    );
    if (!ability.can("edit", "secrets", object)) {
      skipped += 1;
      continue;
    }
    const value = rewriteReferences(before.value, origin, moved);
    if (value === undefined) continue;
    await writeSecretUpdate(ctx, trx, key, before, { ...before, value });
    rewritten += 1;
  }
  return { rewritten, skipped };
};
