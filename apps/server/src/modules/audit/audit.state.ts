import type { Actor } from "../../context";
import { createAuditBuffer, type AuditBuffer } from "./audit-buffer";
import type { AuditActor } from "./audit-writer";

declare module "../../context" {
  interface AppDeps {
    /** Read events waiting for the audit-flush job (changes write theirs in their own transaction). */
    auditBuffer: AuditBuffer;
    /** Each caller's audit actor with its serialised form, once per `Actor` (so once per cached token). */
    auditActors: WeakMap<Actor, AuditActor>;
  }
}

export const createAuditState = () => ({
  auditBuffer: createAuditBuffer(),
  auditActors: new WeakMap<Actor, AuditActor>(),
});
