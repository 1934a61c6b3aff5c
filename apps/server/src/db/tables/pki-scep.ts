import type { ColumnType } from "kysely";
import type { CreatedAt } from "./foundation";

type TimestampValue = ColumnType<Date, Date | string, Date | string>;

/** A SCEP profile's RA certificates; the newest is current. The key is PKCS#8 PEM sealed under the root key. */
export interface PkiScepRasTable {
  id: string;
  profile_id: string;
  serial_number: string;
  certificate_pem: string;
  encrypted_private_key: string;
  not_after: TimestampValue;
  created_at: CreatedAt;
}

/** Pending one-time SCEP challenges, by SHA-256 hash only. */
export interface PkiScepChallengesTable {
  challenge_hash: Buffer;
  profile_id: string;
  expires_at: TimestampValue;
  created_at: CreatedAt;
}

export interface PkiScepTables {
  pki_scep_ras: PkiScepRasTable;
  pki_scep_challenges: PkiScepChallengesTable;
}
