declare module "../../context" {
  interface AppDeps {
    /**
     * Runs this instance's due secret syncs soon (a sync was created, changed or triggered). Set by
     * the secret-sync job while it runs; without it, the next pass of any instance picks the sync up.
     */
    secretSyncWake: { wake: () => void };
  }
}

export const createSecretSyncsState = () => ({ secretSyncWake: { wake: () => undefined } });
