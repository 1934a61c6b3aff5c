import { DEFAULT_STS_ENDPOINT } from "@keyward/contract";
import type { PublicContext } from "../../../context";
import { isUuid } from "../../../db/errors";
import { BadRequestError, NotFoundError, UnauthorizedError } from "../../../errors";
import { OutboundRequestError, requestPinned, resolveOutboundTarget } from "../../../lib/outbound";
import { failingIfRemovedMeanwhile } from "../shared/login-common";
import { issueWorkloadToken, listOf } from "../shared/workload-login";
import { findAwsLoginConfig } from "./aws-auth.repository";
import { parsePrincipalArn, principalAllowed } from "./aws-principal";

type AwsLoginBody = {
  identityId: string;
  iamHttpRequestMethod: string;
  iamRequestBody: string;
  iamRequestHeaders: string;
};

const MAX_HEADERS = 50;
// Hop-by-hop headers belong to the client's connection, not to the signed request.
const HOP_BY_HOP: readonly string[] = ["connection", "keep-alive", "transfer-encoding", "upgrade", "te", "trailer"];

/** The signed headers the client sent (base64 of a JSON object of strings). */
const decodeHeaders = (encoded: string): Record<string, string> => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(encoded, "base64").toString("utf8"));
  } catch {
    throw new BadRequestError("iamRequestHeaders must be base64-encoded JSON");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw new BadRequestError("iamRequestHeaders must be a JSON object");
  const entries = Object.entries(parsed as Record<string, unknown>);
  if (entries.length > MAX_HEADERS || entries.some(([, v]) => typeof v !== "string" || /[\r\n]/.test(v)))
    throw new BadRequestError("iamRequestHeaders must map header names to single-line strings");
  return Object.fromEntries(entries.filter(([k]) => !HOP_BY_HOP.includes(k.toLowerCase()))) as Record<string, string>;
};

const headerOf = (headers: Record<string, string>, name: string) =>
  Object.entries(headers).find(([k]) => k.toLowerCase() === name)?.[1];

/** `Credential=AKID/<date>/<region>/sts/aws4_request` in the Authorization header. */
const regionOf = (headers: Record<string, string>) => {
  const region = /Credential=[^/]*\/[^/]*\/([^/]*)\//.exec(headerOf(headers, "authorization") ?? "")?.[1];
  if (!region || region.length > 20 || !/^[a-z0-9-]+$/.test(region)) throw new BadRequestError("Invalid AWS region");
  return region;
};

const stsUrlOf = (configured: string, region: string) =>
  configured.replace(/\/+$/, "") === DEFAULT_STS_ENDPOINT.replace(/\/+$/, "")
    ? `https://sts.${region}.amazonaws.com/`
    : configured;

const xmlField = (xml: string, name: string) =>
  new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml)?.[1]?.replace(/&amp;/g, "&").replace(/&lt;/g, "<");

type CallerIdentity = { Account?: string; Arn?: string; UserId?: string };

/** STS answers JSON when asked (Accept) and XML otherwise; both are read. */
const parseCallerIdentity = (status: number, body: string): CallerIdentity => {
  let json: Record<string, unknown> | undefined;
  try {
    json = JSON.parse(body) as Record<string, unknown>;
  } catch {
    json = undefined;
  }
  if (status !== 200) {
    const message =
      ((json?.Error as { Message?: string } | undefined)?.Message ?? xmlField(body, "Message")) || `status ${status}`;
    throw new UnauthorizedError(`AWS STS refused the request: ${message}`);
  }
  if (json) {
    const response = json.GetCallerIdentityResponse as { GetCallerIdentityResult?: CallerIdentity } | undefined;
    return response?.GetCallerIdentityResult ?? {};
  }
  return { Account: xmlField(body, "Account"), Arn: xmlField(body, "Arn"), UserId: xmlField(body, "UserId") };
};

/** Forward the client's signed sts:GetCallerIdentity request unchanged; STS says who signed it. */
const callerIdentity = async (ctx: PublicContext, stsEndpoint: string, body: AwsLoginBody) => {
  const headers = decodeHeaders(body.iamRequestHeaders);
  const requestBody = Buffer.from(body.iamRequestBody, "base64").toString("utf8");
  const region = regionOf(headers);
  const length = headerOf(headers, "content-length");
  if (length !== undefined && Number(length) !== Buffer.byteLength(requestBody))
    throw new BadRequestError("Content-Length does not match the request body");
  if (headerOf(headers, "accept") === undefined) headers.Accept = "application/json";
  const target = await resolveOutboundTarget(stsUrlOf(stsEndpoint, region), {
    schemes: ["https:"],
    policy: ctx.deps.env.ALLOW_PRIVATE_OUTBOUND,
  });
  let answer;
  try {
    answer = await requestPinned(target, {
      method: body.iamHttpRequestMethod,
      headers,
      body: requestBody,
      caCert: ctx.deps.outboundCa,
      timeoutMs: 10_000,
      maxBytes: 64 * 1024,
    });
  } catch (error) {
    if (error instanceof OutboundRequestError || error instanceof Error)
      throw new UnauthorizedError(`Failed to reach AWS STS: ${error.message}`);
    throw error;
  }
  const identity = parseCallerIdentity(answer.status, answer.body);
  if (!identity.Account || !identity.Arn) throw new UnauthorizedError("AWS STS gave no caller identity");
  return identity as Required<Pick<CallerIdentity, "Account" | "Arn">> & CallerIdentity;
};

/** Log in with a signed sts:GetCallerIdentity request (what the SDKs' awsIamAuth.login send). */
export const loginWithAws = failingIfRemovedMeanwhile(async (ctx: PublicContext, body: AwsLoginBody) => {
  const config = isUuid(body.identityId) ? await findAwsLoginConfig(ctx.deps.db, body.identityId) : undefined;
  if (!config) throw new NotFoundError("AWS auth method not found for identity, did you configure AWS auth?");
  const identity = await callerIdentity(ctx, config.sts_endpoint, body);
  const accounts = listOf(config.allowed_account_ids);
  if (accounts.length > 0 && !accounts.includes(identity.Account))
    throw new UnauthorizedError("Access denied: AWS account ID not allowed.");
  const principal = parsePrincipalArn(identity.Arn);
  const allowedArns = listOf(config.allowed_principal_arns);
  if (allowedArns.length > 0 && !principalAllowed(principal, allowedArns))
    throw new UnauthorizedError(
      `Access denied: AWS principal ARN not allowed. [principal-arn=${principal.formattedArn}]`,
    );
  return issueWorkloadToken(ctx, config, {
    accountId: identity.Account,
    arn: identity.Arn,
    userId: identity.UserId ?? "",
    partition: principal.partition,
    service: principal.service,
    resourceType: principal.resourceType,
    resourceName: principal.resourceName,
  });
});
