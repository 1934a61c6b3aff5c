import type { Gateway } from "@keyward/contract";
import { toIso } from "../../lib/dates";
import type { GatewayViewRow } from "./gateway.repository";

const authMethodOf = (row: GatewayViewRow): Gateway["authMethod"] => {
  if (row.auth_method === "identity") {
    return { method: "identity", config: { identityId: row.identity_id!, identityName: row.identity_name ?? null } };
  }
  if (row.auth_method === "aws") {
    return {
      method: "aws",
      config: {
        id: row.aws_id!,
        stsEndpoint: row.aws_sts_endpoint!,
        allowedPrincipalArns: row.aws_allowed_principal_arns!,
        allowedAccountIds: row.aws_allowed_account_ids!,
        createdAt: toIso(row.aws_created_at!),
        updatedAt: toIso(row.aws_updated_at!),
      },
    };
  }
  return { method: "token", config: {} };
};

/**
 * `canRevoke`: never for identity-linked gateways (their
 * credentials are the identity's), otherwise once it has logged in or holds an unused enrolment token.
 */
export const toGatewayDto = (row: GatewayViewRow): Gateway => ({
  id: row.id,
  identityId: row.identity_id,
  relayId: row.relay_id,
  name: row.name,
  directAddress: row.direct_address,
  canRevoke: row.auth_method !== "identity" && (row.token_version > 0 || row.has_unused_enrollment_token),
  heartbeat: toIso(row.heartbeat),
  directHeartbeat: toIso(row.direct_heartbeat),
  heartbeatTTL: row.heartbeat_ttl,
  isHealthy: row.is_healthy,
  createdAt: toIso(row.created_at),
  updatedAt: toIso(row.updated_at),
  authMethod: authMethodOf(row),
});
