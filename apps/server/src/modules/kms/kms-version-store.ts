import type { DataKey } from "../../crypto/data-keys";
import type { Tx } from "../../db/transaction";
import { insertKeyVersion } from "./kms-key.repository";
import { sealMaterial } from "./kms-material";

/** Seals one version's material under the project's data key, bound to the new version row. */
export const addKeyVersion = async (
  trx: Tx,
  dataKey: DataKey,
  v: { keyId: string; version: number; versionId: string; material: Buffer; publicKey: string | null },
) =>
  insertKeyVersion(trx, {
    id: v.versionId,
    key_id: v.keyId,
    version: v.version,
    encrypted_material: sealMaterial(dataKey, v.versionId, v.material),
    public_key: v.publicKey,
  });
