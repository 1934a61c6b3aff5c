import type { Actor } from "../../context";
import type { SecretBox } from "../../crypto/envelope";
import { createAuditBuffer, type AuditBuffer } from "./audit-buffer";
import { AUDIT_CURSOR_KEY_PURPOSE } from "./audit-cursor";
import type { AuditActor } from "./audit-writer";

declare module "../../context" {
  interface AppDeps {
    /** Read events waiting for the audit-flush job (changes write theirs in their own transaction). */
    auditBuffer: AuditBuffer;
    /** Each caller's audit actor with its serialised form, once per `Actor` (so once per cached token). */
    auditActors: WeakMap<Actor, AuditActor>;
    /** The HMAC key audit-log list cursors are tagged with, derived once from the root key. */
    auditCursorKey: Buffer;
  }
}

export const createAuditState = (secretBox: SecretBox) => ({
  auditBuffer: createAuditBuffer(),
  auditActors: new WeakMap<Actor, AuditActor>(),
  auditCursorKey: secretBox.deriveKey(AUDIT_CURSOR_KEY_PURPOSE),
});
