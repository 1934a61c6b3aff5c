import type { SecretSyncPlan } from "@keyward/contract";
import type { DestinationDriver, FoundSecret } from "./destinations/destination";

export type SyncOptions = {
  keySchema?: string;
  disableSecretDeletion?: boolean;
  unownedSecrets?: "keep" | "overwrite" | "delete";
};

/** A folder key through the key schema (`{{secretKey}}`, `{{environment}}`); the key itself without one. */
export const applyKeySchema = (schema: string | undefined, key: string, environment: string) =>
  schema ? schema.replaceAll("{{environment}}", environment).replace("{{secretKey}}", key) : key;

/**
 * Whether a destination key could have come from the key schema (its fixed prefix and suffix, and no
 * "/" in the middle when the schema has one). Only keys in this scope are ever deleted as unowned
 * (`unownedSecrets: "delete"`); ownership, not the schema, decides everything else.
 */
export const matchesKeySchema = (schema: string | undefined, key: string, environment: string) => {
  if (!schema) return true;
  const [prefix = "", suffix = ""] = schema.replaceAll("{{environment}}", environment).split("{{secretKey}}");
  if (!key.startsWith(prefix) || !key.endsWith(suffix) || key.length <= prefix.length + suffix.length) return false;
  return !schema.includes("/") || !key.slice(prefix.length, key.length - suffix.length).includes("/");
};

/** What a sync records of each destination name it wrote: the value's HMAC (null while unconfirmed). */
export type Ownership = Map<string, string | null>;

/** The plan plus what carrying it out needs: the values to write and the names to take over. */
export type WorkPlan = SecretSyncPlan & {
  writes: Map<string, { value: string; exists: boolean }>;
  /** Names found at the destination with this sync's value already, recorded as written without a write. */
  adopt: Map<string, string>;
  /** Names this sync owned that are gone from the destination: their records are dropped. */
  forget: string[];
  /** Owned names whose destination value was changed outside Keyward since this sync wrote it (rewritten). */
  drifted: string[];
};

export type PlanInput = {
  driver: DestinationDriver;
  config: Record<string, unknown>;
  environment: string;
  options: SyncOptions;
  /** The folder's values as the destination stores them, by destination name. */
  desired: Map<string, string>;
  /** Folder keys the destination cannot name. */
  invalid: string[];
  found: Map<string, FoundSecret>;
  /** This sync's records. */
  owned: Ownership;
  /** Names another sync of the same place owns. */
  ownedElsewhere: ReadonlySet<string>;
  /** Whether `found` carries the destination's values (else owned names are compared by their recorded HMAC). */
  readBack: boolean;
  hmacOf: (name: string, value: string) => string;
};

/**
 * The next run, decided name by name. A destination secret this sync did not write is never written
 * or deleted unless `unownedSecrets` says so; one another sync owns is never touched. An owned secret
 * is rewritten when its value differs (read back where the destination shows values, else by the
 * recorded HMAC) and deleted when the folder no longer has it, unless deletion is disabled.
 */
export const planRun = (input: PlanInput): WorkPlan => {
  const { driver, options, found, owned, ownedElsewhere } = input;
  const readsValues = driver.readsValues && input.readBack;
  const unowned = options.unownedSecrets ?? "keep";
  const plan: WorkPlan = {
    create: [],
    update: [],
    delete: [],
    unchanged: [],
    skipped: input.invalid.map((key) => ({ key, reason: "invalid-name" as const })),
    writes: new Map(),
    adopt: new Map(),
    forget: [],
    drifted: [],
  };
  const wanted = new Set<string>();
  for (const [name, value] of input.desired) {
    if (value === "" && !driver.writesEmpty) {
      plan.skipped.push({ key: name, reason: "empty-value" });
      continue;
    }
    if (ownedElsewhere.has(name)) {
      plan.skipped.push({ key: name, reason: "owned-by-another-sync" });
      continue;
    }
    const there = found.get(name);
    const mine = owned.has(name);
    if (there && !mine && unowned === "keep") {
      plan.skipped.push({ key: name, reason: "exists-unowned" });
      continue;
    }
    wanted.add(name);
    if (!there) {
      plan.create.push(name);
      plan.writes.set(name, { value, exists: false });
      continue;
    }
    const same = readsValues ? there.value === value : mine && owned.get(name) === input.hmacOf(name, value);
    if (same) {
      plan.unchanged.push(name);
      if (!mine || owned.get(name) !== input.hmacOf(name, value)) plan.adopt.set(name, value);
    } else {
      plan.update.push(name);
      plan.writes.set(name, { value, exists: true });
      // The folder's value is the one this sync last wrote, yet the destination holds another.
      if (readsValues && mine && owned.get(name) === input.hmacOf(name, value)) plan.drifted.push(name);
    }
  }
  for (const name of owned.keys()) {
    if (wanted.has(name)) continue;
    if (!found.has(name)) plan.forget.push(name);
    else if (!options.disableSecretDeletion) plan.delete.push(name);
  }
  if (unowned === "delete" && !options.disableSecretDeletion)
    for (const name of found.keys()) {
      const key = driver.keyOf(input.config, name);
      if (wanted.has(name) || owned.has(name) || ownedElsewhere.has(name)) continue;
      if (matchesKeySchema(options.keySchema, key, input.environment)) plan.delete.push(name);
    }
  for (const list of [plan.create, plan.update, plan.delete, plan.unchanged]) list.sort();
  plan.skipped.sort((a, b) => a.key.localeCompare(b.key));
  return plan;
};

/**
 * The folder's values as destination names: shaped by the driver (Secrets Manager's many-to-one makes
 * one JSON secret of them all), then each name through the key schema and the driver's naming.
 */
export const desiredOf = (
  driver: DestinationDriver,
  config: Record<string, unknown>,
  options: SyncOptions,
  environment: string,
  values: Map<string, string>,
) => {
  const desired = new Map<string, string>();
  const invalid: string[] = [];
  for (const [key, value] of driver.shape(config, values)) {
    const name = driver.nameOf(config, applyKeySchema(options.keySchema, key, environment));
    if (name === undefined) invalid.push(key);
    else desired.set(name, value);
  }
  return { desired, invalid };
};
