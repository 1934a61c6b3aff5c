import type { ChangeRequest } from "@keyward/contract";
import type { RequestContext } from "../../context";
import type { Ability } from "../../permissions";
import type { BatchCreateItem, BatchUpdateItem } from "./secret-apply";

/** One secret's part of a write that may be held for review. */
export type ProposedChange =
  | { op: "create"; item: BatchCreateItem }
  | { op: "update"; item: Omit<BatchUpdateItem, "secretPath"> }
  | { op: "delete"; secretKey: string };

/** Where the write was aimed and who made it. */
export type ProposedTarget = {
  projectId: string;
  ability: Ability;
  folderId: string;
  environment: string;
  secretPath: string;
};

/**
 * What stands before every write to secrets: a folder may be protected by a change policy, and then a
 * write is not made but taken as a change request. The approvals module implements it; secrets reach it
 * through the dependencies (`deps.secretWriteGate`) so that they do not import approvals, which applies
 * the writes it holds through secrets.
 */
export type SecretWriteGate = {
  /** Lets the write through (undefined) or takes it as a change request (returned, the write not made). */
  propose: (
    ctx: RequestContext,
    target: ProposedTarget,
    changes: readonly ProposedChange[],
  ) => Promise<ChangeRequest | undefined>;
  /** For writes that have no change-request form (a rollback, a move): refused in a protected folder. */
  assertUnprotected: (
    ctx: RequestContext,
    projectId: string,
    at: { environment: string; secretPath: string },
    what: string,
  ) => Promise<void>;
};

declare module "../../context" {
  interface AppDeps {
    /** Lets a write to secrets through or takes it as a change request. */
    secretWriteGate: SecretWriteGate;
  }
}
