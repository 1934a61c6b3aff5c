import { parseDuration } from "@keyward/contract";
import type { Database } from "../../db/database";
import type { Tx } from "../../db/transaction";
import type { PermissionRule } from "../../permissions";
import {
  grantRequestedIdentityPrivilege,
  listRequestedIdentityPrivileges,
  revokeRequestedIdentityPrivilege,
  windowOf,
  type PrivilegeWindow,
} from "../privileges/privileges.service";
import {
  grantRequestedUserPrivilege,
  listRequestedUserPrivileges,
  revokeRequestedUserPrivilege,
} from "../users/user-privileges.service";
import type { RequestRow } from "./access-approval.repository";

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
  const input = {
    projectId: request.project_id,
    membershipId,
    rules: request.rules as PermissionRule[],
    window,
    requestId: request.id,
  };
  const row =
    request.requester_type === "user"
      ? await grantRequestedUserPrivilege(trx, { ...input, userId: request.requested_by_user_id! })
      : await grantRequestedIdentityPrivilege(trx, { ...input, identityId: request.requested_by_identity_id! });
  return row.id;
};

export const revokeGrantedPrivilege = (trx: Tx, request: Requester & { id: string }) =>
  request.requester_type === "user"
    ? revokeRequestedUserPrivilege(trx, request.id)
    : revokeRequestedIdentityPrivilege(trx, request.id);

/** The privileges of requests, by request id. */
export const privilegesOfRequests = async (db: Database, requestIds: readonly string[]) => {
  const [people, identities] = await Promise.all([
    listRequestedUserPrivileges(db, requestIds),
    listRequestedIdentityPrivileges(db, requestIds),
  ]);
  return new Map([...people, ...identities].map((row) => [row.access_request_id!, row]));
};
