import { randomUUID } from "node:crypto";
import type { ActorContext } from "../../context";
import { inTransaction } from "../../db/transaction";
import { BadRequestError } from "../../errors";
import { ensureProjectKey } from "../project-keys/project-key.service";
import { bumpKeyVersion, findKeyById } from "./kms-key.repository";
import { assertKeyPermission, keyNotFound, loadKey, toKmsKeyDto } from "./kms-key.service";
import { addKeyVersion } from "./kms-version-store";
import { generateMaterial, isSymmetric } from "./kms-material";

/**
 * Keyward's rotation: a new version encrypts from now on and every older one still decrypts (each
 * ciphertext names its version). Only symmetric keys rotate: a signature names no version, so a
 * rotated signing key would silently change the public key its verifiers hold.
 */
export const rotateKmsKey = async (ctx: ActorContext, keyId: string) => {
  const row = await loadKey(ctx, keyId, (id) => findKeyById(ctx.deps.db, id), false);
  await assertKeyPermission(ctx, row, "edit");
  if (!isSymmetric(row.encryption_algorithm))
    throw new BadRequestError(`Key with ID '${row.id}' is a sign-verify key: only encrypt-decrypt keys can be rotated`);
  if (row.is_disabled) throw new BadRequestError("Key is disabled");
  const { material } = await generateMaterial(row.encryption_algorithm);
  try {
    return await inTransaction(ctx, async (trx) => {
      const dataKey = await ensureProjectKey(ctx.deps, trx, row.project_id);
      const bumped = await bumpKeyVersion(trx, row.id);
      if (!bumped) throw keyNotFound(keyId, false);
      await addKeyVersion(trx, dataKey, {
        keyId: row.id,
        version: bumped.version,
        versionId: randomUUID(),
        material,
        publicKey: null,
      });
      return toKmsKeyDto((await findKeyById(trx, row.id))!);
    });
  } finally {
    material.fill(0);
  }
};
