import { randomUUID } from "node:crypto";
import type { Tenant } from "../helpers/tenant";
import { expectOk, uniqueName } from "../helpers/tenant";

export const AWS_METHOD = {
  method: "aws" as const,
  allowedAccountIds: "123456789012,  210987654321",
  allowedPrincipalArns: "arn:aws:iam::123456789012:role/gateway",
};

export const createTokenGateway = async (tenant: Tenant, name = uniqueName("gateway")) =>
  expectOk(await tenant.admin.gateways.create({ body: { name, authMethod: { method: "token" } } }));

export const createAwsGateway = async (tenant: Tenant, name = uniqueName("gateway")) =>
  expectOk(await tenant.admin.gateways.create({ body: { name, authMethod: AWS_METHOD } }));

/** A token gateway that has enrolled: returns its access token. */
export const enrolGateway = async (tenant: Tenant) => {
  const gateway = await createTokenGateway(tenant);
  const { token } = expectOk(await tenant.admin.gateways.mintEnrollmentToken({ params: { gatewayId: gateway.id } }));
  const login = expectOk(await tenant.anonymous.gateways.login({ body: { method: "token", token } }));
  return { gateway, accessToken: login.accessToken, client: tenant.app.client(login.accessToken) };
};

export const missingId = () => randomUUID();

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
