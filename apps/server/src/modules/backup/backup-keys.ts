import { createSecretBox, type SecretBox } from "../../crypto/envelope";
import { SealConfigError } from "../../crypto/root-seal";
import { keyringOfSealedRoot, type SealedRoot, type Seals } from "../root-keys/root-key.boot";
import { BackupRefusal } from "./backup-refusal";

/**
 * The keys a backup file is sealed and checked under: from the instance's sealed root (carried in the
 * header, or read from the snapshot) opened with the command's seals; for a database from before root
 * keys had versions, the key itself. A seal that is missing or wrong is a refusal naming it.
 */
export const backupKeyring = async (
  root: SealedRoot | undefined,
  seals: Seals,
  command = "backup",
  /** The refusal for an ENCRYPTION_KEY that is not the instance's (the command's own wording). */
  wrongKey?: () => BackupRefusal,
): Promise<SecretBox> => {
  if (!root) {
    if (!seals.legacyKey)
      throw new BackupRefusal(`${command} refused: no key; set ENCRYPTION_KEY to the source instance's key`);
    return createSecretBox(seals.legacyKey);
  }
  try {
    return await keyringOfSealedRoot(root, seals);
  } catch (error) {
    if (!(error instanceof SealConfigError)) throw error;
    if (wrongKey && error.message.startsWith("ENCRYPTION_KEY does not open")) throw wrongKey();
    throw new BackupRefusal(`${command} refused: ${error.message}`);
  }
};
