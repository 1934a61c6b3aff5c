import type { Tx } from "../db/transaction";

/**
 * What a change carries to the transaction that commits it: a request's audit event, or a
 * background job's platform event. It travels explicitly, in the request's context (`ctx.scope`),
 * never through AsyncLocalStorage: with Node 20, an AsyncLocalStorage once used keeps async hooks on
 * for every promise of the process, about a tenth of a hot read's CPU.
 */
export interface RequestScope {
  beforeCommit(trx: Tx): Promise<void>;
}

const KEY = "changeScope";

/** The route entry attaches an audited request's scope to its response; `contextOf` hands it to services. */
export const attachScope = (res: { locals: Record<string, unknown> }, scope: RequestScope) => {
  res.locals[KEY] = scope;
};

export const scopeOfResponse = (res: { locals: Record<string, unknown> }) =>
  res.locals[KEY] as RequestScope | undefined;
