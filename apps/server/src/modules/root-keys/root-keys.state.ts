import type { Database } from "../../db/database";
import type { RootKeyring } from "../../crypto/root-keyring";
import { listRootKeys } from "./root-key.repository";
import { holdLiveVersions, type Seals } from "./root-key.boot";

declare module "../../context" {
  interface AppDeps {
    rootKeys: RootKeysState;
  }
}

export type RootKeysState = {
  keyring: RootKeyring;
  seals: Seals;
  /** Brings the keyring in line with `root_keys` (new versions unsealed, the active one, retired ones forgotten). */
  refresh: () => Promise<void>;
  /** A stable name for this process, for the rotation job's lease. */
  instanceId: string;
  /** Wakes this process's rotation job (a rotation was just started here). */
  wake: () => void;
  /** Set by the rotation job while it runs. */
  wakers: Set<() => void>;
};

/**
 * The keyring follows the table: a version another instance created is unsealed with this process's
 * seal, the active version moves, retired versions are forgotten. Refreshes are single-flight: one
 * asked while another runs makes exactly one more after it.
 */
export const createRootKeysState = (db: Database, keyring: RootKeyring, seals: Seals, instanceId: string) => {
  let running: Promise<void> | undefined;
  let again = false;
  const once = async () => {
    const rows = await listRootKeys(db);
    await holdLiveVersions(keyring, seals, rows);
    for (const row of rows) if (row.state === "retired" && keyring.has(row.version)) keyring.forget(row.version);
  };
  const refresh = (): Promise<void> => {
    if (running) {
      again = true;
      return running;
    }
    running = once().finally(() => {
      running = undefined;
      if (again) {
        again = false;
        void refresh().catch(() => undefined);
      }
    });
    return running;
  };
  const wakers = new Set<() => void>();
  const wake = () => {
    for (const waker of wakers) waker();
  };
  const state: RootKeysState = { keyring, seals, refresh, instanceId, wake, wakers };
  keyring.onMissing(() => void refresh().catch(() => undefined));
  return { rootKeys: state };
};
