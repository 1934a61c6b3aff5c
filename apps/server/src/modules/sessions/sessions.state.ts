import type { SecretBox } from "../../crypto/envelope";
import { SESSION_KEY_PURPOSE } from "./session-token";

declare module "../../context" {
  interface AppDeps {
    /** The HMAC key people's access tokens are signed with, derived once from the root key. */
    sessionSigningKey: Buffer;
  }
}

export const createSessionsState = (secretBox: SecretBox) => ({
  sessionSigningKey: secretBox.deriveKey(SESSION_KEY_PURPOSE),
});
