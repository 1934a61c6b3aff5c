import { join } from "node:path";
import type { Env } from "../../env";
import type { Logger } from "../../lib/logger";
import { loadRootKey, readRootKey } from "../../crypto/envelope";
import { softwareSeal } from "../../crypto/root-seal";
import type { Database } from "../../db/database";
import { keyringFromSnapshot, type KeyringSnapshot } from "../../crypto/root-keyring";
import { openKeyring, type Seals } from "./root-key.boot";

/** The HSM as the environment configures it, or undefined (all three of path, PIN and label, or none: env.ts checks). */
const hsmConfigOf = (env: Env) =>
  env.HSM_LIB_PATH && env.HSM_PIN && env.HSM_KEY_LABEL
    ? {
        libPath: env.HSM_LIB_PATH,
        pin: env.HSM_PIN,
        slot: env.HSM_SLOT,
        keyLabel: env.HSM_KEY_LABEL,
        generateKey: env.HSM_GENERATE_KEY === "true",
      }
    : undefined;

/**
 * The seals this process can use. Software: ENCRYPTION_KEY, else the data directory's `root.key`
 * (generated when there is no HSM; with an HSM only an existing file is read, to migrate from it).
 * HSM: opened and self-tested now (the PKCS#11 binding is loaded only then); a problem is a
 * start-up error of one line.
 */
export const openSeals = async (
  env: Env,
  dataDir: string,
  logger?: Logger,
  { generateKeyFile = true } = {},
): Promise<Seals> => {
  const hsmConfig = hsmConfigOf(env);
  const seals: Seals = {};
  if (env.ENCRYPTION_KEY) {
    seals.legacyKey = Buffer.from(env.ENCRYPTION_KEY, "base64");
  } else {
    const key = hsmConfig || !generateKeyFile ? readRootKey(undefined, dataDir) : loadRootKey(undefined, dataDir);
    if (key) {
      seals.legacyKey = key;
      seals.softwareKeyFile = join(dataDir, "root.key");
    }
  }
  if (seals.legacyKey) seals.software = softwareSeal(seals.legacyKey);
  if (env.ENCRYPTION_KEY_PREVIOUS) seals.previous = [softwareSeal(Buffer.from(env.ENCRYPTION_KEY_PREVIOUS, "base64"))];
  if (hsmConfig) {
    const { openHsmSeal } = await import("../../crypto/hsm-seal");
    seals.hsm = await openHsmSeal({
      ...hsmConfig,
      // An outage is logged once when it starts and once when it ends, never per request.
      onOutage: ({ state, reason }) =>
        state === "down"
          ? logger?.error({ reason }, "the HSM that seals the root keys is unavailable")
          : logger?.info({ reason }, "the HSM that seals the root keys answers again"),
    });
    seals.hsmKeyLabel = hsmConfig.keyLabel;
    if (env.HSM_KEY_LABEL_PREVIOUS) {
      const previous = await openHsmSeal({
        ...hsmConfig,
        keyLabel: env.HSM_KEY_LABEL_PREVIOUS,
        generateKey: false,
      }).catch(async (error: unknown) => {
        await closeSeals(seals);
        throw error;
      });
      seals.previous = [...(seals.previous ?? []), previous];
    }
  }
  return seals;
};

export const closeSeals = async (seals: Seals) => {
  for (const seal of seals.previous ?? []) await seal.close();
  await seals.hsm?.close();
};

/** The seals and the keyring of this process; a failure closes what was opened (the HSM session) and is thrown. */
export const openRootKeys = async (env: Env, db: Database, logger?: Logger, given?: KeyringSnapshot) => {
  const seals = await openSeals(env, env.DATA_DIR, logger);
  try {
    return { seals, keyring: given ? keyringFromSnapshot(given) : await openKeyring(db, seals) };
  } catch (error) {
    await closeSeals(seals);
    throw error;
  }
};

/** The seals of a command (backup, restore): as the server's, but a missing `root.key` is never generated. */
export const commandSeals = (env: Env) => openSeals(env, env.DATA_DIR, undefined, { generateKeyFile: false });
