import { randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import { requestPinned, type OutboundTarget } from "../../lib/outbound";
import { vetUrl, type Reach } from "./rules";

/** An AWS account reached with an access key (with a session token: an assumed role's), in one region. */
export type AwsTarget = {
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  ca?: string;
};

/** How long one AWS request may take; a whole use is bounded by the caller's deadline. */
const REQUEST_TIMEOUT_MS = 15_000;
/** An AWS answer larger than this is refused (a page of 20 secret values fits many times over). */
const MAX_ANSWER_BYTES = 16 * 1_048_576;

/** The parts of the SDK's HTTP request the handler reads. */
type SdkRequest = {
  protocol: string;
  hostname: string;
  port?: number;
  method: string;
  path: string;
  query?: Record<string, string | string[] | null>;
  headers: Record<string, string>;
  body?: unknown;
};

const queryOf = (query: SdkRequest["query"]) => {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value === null) params.append(name, "");
    else for (const one of Array.isArray(value) ? value : [value]) params.append(name, one);
  }
  const text = params.toString().replace(/\+/g, "%20");
  return text ? `?${text}` : "";
};

const bodyOf = (body: unknown) => {
  if (body === undefined || body === null) return undefined;
  if (typeof body === "string") return body;
  // The bytes themselves: the SDK's body may be a Uint8Array whose valueOf is its text (Buffer.from would ask it).
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8");
  throw new Error("AWS request bodies are sent whole");
};

/**
 * The SDK's HTTP handler, replaced: the SDK serializes and signs, Keyward sends. Each endpoint is
 * resolved and vetted by the outbound rule (ALLOW_PRIVATE_OUTBOUND) once per client, its address
 * pinned, TLS checked against `ca` (OUTBOUND_EXTRA_CA_FILE with the system roots), no redirect
 * followed and every answer bounded in size and time.
 */
const outboundHandler = (reach: Reach, ca: string | undefined) => {
  const vetted = new Map<string, Promise<OutboundTarget>>();
  return {
    metadata: { handlerProtocol: "http/1.1" },
    handle: async (request: SdkRequest, options?: { abortSignal?: AbortSignal }) => {
      const origin = `${request.protocol}//${request.hostname}${request.port ? `:${request.port}` : ""}`;
      let target = vetted.get(origin);
      if (!target) vetted.set(origin, (target = vetUrl(origin, ["https:"], reach.outbound)));
      const answer = await requestPinned(await target, {
        method: request.method,
        path: `${request.path}${queryOf(request.query)}`,
        headers: request.headers,
        body: bodyOf(request.body),
        caCert: ca,
        timeoutMs: REQUEST_TIMEOUT_MS,
        maxBytes: MAX_ANSWER_BYTES,
        ...(options?.abortSignal ? { signal: options.abortSignal } : {}),
      });
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(answer.headers))
        if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value;
      return {
        response: { statusCode: answer.status, headers, body: Readable.from([Buffer.from(answer.body, "utf8")]) },
      };
    },
    updateHttpClientConfig: () => undefined,
    httpHandlerConfigs: () => ({}),
    destroy: () => undefined,
  };
};

/**
 * The configuration of an AWS SDK v3 client for `target`. The SDK finds the endpoint as it always
 * does (the region's, or AWS_ENDPOINT_URL_<SERVICE> / AWS_ENDPOINT_URL for private endpoints and
 * tests); only the transport is Keyward's.
 */
export const awsClientConfig = (reach: Reach, target: AwsTarget) => ({
  region: target.region,
  credentials: {
    accessKeyId: target.accessKeyId,
    secretAccessKey: target.secretAccessKey,
    ...(target.sessionToken ? { sessionToken: target.sessionToken } : {}),
  },
  requestHandler: outboundHandler(reach, target.ca),
  maxAttempts: 3,
});

/** The account an access key belongs to (STS GetCallerIdentity). */
export const awsCallerIdentity = async (reach: Reach, target: AwsTarget) => {
  const { STSClient, GetCallerIdentityCommand } = await import("@aws-sdk/client-sts");
  const client = new STSClient(awsClientConfig(reach, target));
  try {
    const answer = await client.send(new GetCallerIdentityCommand({}));
    return { account: answer.Account ?? "", arn: answer.Arn ?? "" };
  } finally {
    client.destroy();
  }
};

/** How long an assumed role's session lasts: AWS's minimum, as one use of a connection is short. */
const ASSUMED_ROLE_SECONDS = 900;

/**
 * `target`'s key assumes `roleArn` (STS AssumeRole) with `externalId`; the answer is the role's
 * short-lived key, in the same region and trust.
 */
export const awsAssumeRole = async (
  reach: Reach,
  target: AwsTarget,
  role: { roleArn: string; externalId: string },
): Promise<AwsTarget> => {
  const { STSClient, AssumeRoleCommand } = await import("@aws-sdk/client-sts");
  const client = new STSClient(awsClientConfig(reach, target));
  try {
    const answer = await client.send(
      new AssumeRoleCommand({
        RoleArn: role.roleArn,
        ExternalId: role.externalId,
        RoleSessionName: `keyward-${randomBytes(6).toString("hex")}`,
        DurationSeconds: ASSUMED_ROLE_SECONDS,
      }),
    );
    const key = answer.Credentials;
    if (!key?.AccessKeyId || !key.SecretAccessKey || !key.SessionToken)
      throw new Error("AssumeRole answered without credentials");
    return {
      region: target.region,
      accessKeyId: key.AccessKeyId,
      secretAccessKey: key.SecretAccessKey,
      sessionToken: key.SessionToken,
      ...(target.ca ? { ca: target.ca } : {}),
    };
  } finally {
    client.destroy();
  }
};
