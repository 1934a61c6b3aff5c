import type { AppDeps, RequestContext } from "../../../context";
import { contextOf } from "../../../http/authenticate";
import { ok } from "../../../http/respond";

type Handler = { req: Parameters<typeof contextOf>[1]; res: Parameters<typeof contextOf>[2] };
type Identity = { params: { identityId: string } };

/** A method's attach, get, update and revoke, as the handlers its router lists: the answer under `key`. */
export const methodConfigHandlers = <K extends string, A, U, DA, DG, DU, DR>(
  deps: AppDeps,
  key: K,
  method: {
    attach: (ctx: RequestContext, identityId: string, body: A) => Promise<DA>;
    get: (ctx: RequestContext, identityId: string) => Promise<DG>;
    update: (ctx: RequestContext, identityId: string, body: U) => Promise<DU>;
    revoke: (ctx: RequestContext, identityId: string) => Promise<DR>;
  },
) => {
  const wrap = <D>(value: D) => ok({ [key]: value } as { [P in K]: D });
  return {
    attach: async ({ params, body, req, res }: Identity & Handler & { body: A }) =>
      wrap(await method.attach(contextOf(deps, req, res), params.identityId, body)),
    get: async ({ params, req, res }: Identity & Handler) =>
      wrap(await method.get(contextOf(deps, req, res), params.identityId)),
    update: async ({ params, body, req, res }: Identity & Handler & { body: U }) =>
      wrap(await method.update(contextOf(deps, req, res), params.identityId, body)),
    revoke: async ({ params, req, res }: Identity & Handler) =>
      wrap(await method.revoke(contextOf(deps, req, res), params.identityId)),
  };
};
