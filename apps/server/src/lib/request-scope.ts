import { AsyncLocalStorage } from "node:async_hooks";
import type { Tx } from "../db/transaction";

/**
 * What a request carries through its asynchronous work without being passed by hand: today the
 * audit event its change must write before the change's transaction commits.
 */
export interface RequestScope {
  beforeCommit(trx: Tx): Promise<void>;
}

export const requestScope = new AsyncLocalStorage<RequestScope>();
