import { parseDuration } from "@keyward/contract";
import type { Database } from "../../../db/database";
import type { Tx } from "../../../db/transaction";
import type { PermissionRule } from "../../../permissions";
import {
  grantRequestedPrivilege,
  listRequestedPrivileges,
  revokeRequestedPrivilege,
  windowOf,
  type PrivilegeWindow,
} from "../../privileges/privileges.service";
import type { RequestRow } from "./access-request.repository";

/**
 * The access an approved request grants is an additional privilege of the requester (a person's or
 * an identity's), pointing back at the request. These run inside the caller's transaction, after it
 * has bumped the project's permission version.
 */

type Requester = Pick<RequestRow, "requester_type" | "requested_by_user_id" | "requested_by_identity_id">;

/** From now for the requested range; permanent only when no range was asked for. */
export const windowFrom = (start: Date, range: string | null): PrivilegeWindow =>
  range === null || parseDuration(range) === undefined
    ? windowOf({ isTemporary: false })
    : windowOf({
        isTemporary: true,
        temporaryMode: "relative",
        temporaryRange: range,
        temporaryAccessStartTime: start,
      });

export const grantPrivilegeOfRequest = async (
  trx: Tx,
  request: Requester & { id: string; project_id: string; rules: unknown },
  membershipId: string,
  window: PrivilegeWindow,
) => {
  const holder =
    request.requester_type === "user"
      ? { type: "user" as const, id: request.requested_by_user_id! }
      : { type: "identity" as const, id: request.requested_by_identity_id! };
  const row = await grantRequestedPrivilege(trx, holder, {
    projectId: request.project_id,
    membershipId,
    rules: request.rules as PermissionRule[],
    window,
    requestId: request.id,
  });
  return row.id;
};

export const revokeGrantedPrivilege = (trx: Tx, request: Requester & { id: string }) =>
  revokeRequestedPrivilege(trx, request.requester_type as "user" | "identity", request.id);

/** The privileges of requests, by request id. */
export const privilegesOfRequests = async (db: Database, requestIds: readonly string[]) =>
  new Map((await listRequestedPrivileges(db, requestIds)).map((row) => [row.access_request_id!, row]));
