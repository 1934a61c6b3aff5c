import cluster from "node:cluster";
import type { KeyringSnapshot } from "../crypto/root-keyring";

/** The IPC messages of a worker asking its cluster primary for the keyring, and of the answer. */
export const ROOT_KEYS_REQUEST = "keyward-root-keys-request";
export const ROOT_KEYS_MESSAGE = "keyward-root-keys";

/** In a cluster worker, the keyring its primary opened, asked for once listening for the answer. */
export const receiveKeyring = (): Promise<KeyringSnapshot | undefined> =>
  cluster.isWorker
    ? new Promise((resolve) => {
        const onMessage = (message: { type?: string; keyring?: KeyringSnapshot }) => {
          if (message?.type !== ROOT_KEYS_MESSAGE) return;
          process.off("message", onMessage);
          resolve(message.keyring);
        };
        process.on("message", onMessage);
        process.send?.({ type: ROOT_KEYS_REQUEST });
      })
    : Promise.resolve(undefined);
