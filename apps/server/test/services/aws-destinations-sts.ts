import { randomBytes, randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { StsCaller } from "./workload-peers";

/**
 * The AWS stand-in's STS (query protocol): GetCallerIdentity, and AssumeRole by a role's trust policy,
 * whose short-lived keys are valid only with their session token signed into the request.
 */

/** STS's codes for the refusals the JSON services name otherwise. */
export const STS_CODES: Record<string, string> = {
  UnrecognizedClientException: "InvalidClientTokenId",
  InvalidSignatureException: "SignatureDoesNotMatch",
  MissingAuthenticationTokenException: "MissingAuthenticationToken",
  IncompleteSignatureException: "IncompleteSignature",
};

/** Writes an answer with a request id, as every AWS answer carries one. */
export const answer = (res: ServerResponse, status: number, type: string, body: string) => {
  res.writeHead(status, { "content-type": type, "x-amzn-requestid": randomUUID() });
  res.end(body);
};

/** STS's query-protocol error document. */
export const stsError = (res: ServerResponse, status: number, code: string, message: string) =>
  answer(
    res,
    status,
    "text/xml",
    `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>${status >= 500 ? "Receiver" : "Sender"}</Type><Code>${code}</Code><Message>${message}</Message></Error><RequestId>${randomUUID()}</RequestId></ErrorResponse>`,
  );

/**
 * An IAM role the fake lets be assumed: by the access keys it trusts, with the external id its trust
 * policy asks for.
 */
export type AwsRole = { externalId: string; trusted: string[] };

/** One AssumeRole the fake granted: the role, the external id and session name it was asked with. */
export type AssumedRole = { roleArn: string; externalId: string; sessionName: string; accessKeyId: string };

/** The STS of one stand-in: its callers (the known keys and the assumed ones) and its two operations. */
export const stsOf = (callers: Record<string, StsCaller>, roleList: Record<string, AwsRole> = {}) => {
  const roles = new Map(Object.entries(roleList));
  /** The short-lived keys of assumed roles, by access key id, each with its session token. */
  const sessions = new Map<string, StsCaller & { sessionToken: string }>();
  const assumed: AssumedRole[] = [];
  const known = new Proxy(callers, {
    get: (target, keyId: string) => target[keyId] ?? sessions.get(keyId),
  });

  /** STS's AssumeRole: the role's trust (the calling key, the external id) checked as IAM checks it. */
  const assumeRole = (res: ServerResponse, form: URLSearchParams, caller: StsCaller & { accessKeyId: string }) => {
    const roleArn = form.get("RoleArn") ?? "";
    const role = roles.get(roleArn);
    const sessionName = form.get("RoleSessionName") ?? "";
    if (!role || !role.trusted.includes(caller.accessKeyId) || form.get("ExternalId") !== role.externalId)
      return stsError(
        res,
        403,
        "AccessDenied",
        `User: ${caller.arn} is not authorized to perform: sts:AssumeRole on resource: ${roleArn}`,
      );
    const account = roleArn.split(":")[4] ?? "";
    const accessKeyId = `ASIA${randomBytes(8).toString("hex").toUpperCase()}`;
    const session = {
      secretAccessKey: randomBytes(30).toString("base64"),
      sessionToken: randomBytes(48).toString("base64"),
      account,
      arn: `arn:aws:sts::${account}:assumed-role/${roleArn.split("/").pop()}/${sessionName}`,
      userId: `AROA${randomBytes(6).toString("hex").toUpperCase()}:${sessionName}`,
    };
    sessions.set(accessKeyId, session);
    assumed.push({ roleArn, externalId: role.externalId, sessionName, accessKeyId });
    const expiration = new Date(Date.now() + Number(form.get("DurationSeconds") ?? 3_600) * 1_000).toISOString();
    answer(
      res,
      200,
      "text/xml",
      `<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult><Credentials><AccessKeyId>${accessKeyId}</AccessKeyId><SecretAccessKey>${session.secretAccessKey}</SecretAccessKey><SessionToken>${session.sessionToken}</SessionToken><Expiration>${expiration}</Expiration></Credentials><AssumedRoleUser><Arn>${session.arn}</Arn><AssumedRoleId>${session.userId}</AssumedRoleId></AssumedRoleUser></AssumeRoleResult><ResponseMetadata><RequestId>${randomUUID()}</RequestId></ResponseMetadata></AssumeRoleResponse>`,
    );
  };

  /** STS's GetCallerIdentity (every connection's check) and AssumeRole (assume-role connections). */
  const sts = (res: ServerResponse, body: string, caller: StsCaller & { accessKeyId: string }) => {
    const form = new URLSearchParams(body);
    if (form.get("Action") === "AssumeRole" && form.get("Version") === "2011-06-15")
      return assumeRole(res, form, caller);
    if (form.get("Action") !== "GetCallerIdentity" || form.get("Version") !== "2011-06-15")
      return stsError(
        res,
        400,
        "InvalidAction",
        `Could not find operation ${form.get("Action")} for version ${form.get("Version")}`,
      );
    answer(
      res,
      200,
      "text/xml",
      `<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><GetCallerIdentityResult><Arn>${caller.arn}</Arn><UserId>${caller.userId}</UserId><Account>${caller.account}</Account></GetCallerIdentityResult><ResponseMetadata><RequestId>${randomUUID()}</RequestId></ResponseMetadata></GetCallerIdentityResponse>`,
    );
  };

  /** True when a request signed by an assumed role's key lacks its signed session token. */
  const lacksSessionToken = (req: IncomingMessage, accessKeyId: string) => {
    const session = sessions.get(accessKeyId);
    return (
      session !== undefined &&
      (req.headers["x-amz-security-token"] !== session.sessionToken ||
        !/SignedHeaders=[^,]*x-amz-security-token/.test(req.headers.authorization ?? ""))
    );
  };
  return {
    callers: known,
    sts,
    lacksSessionToken,
    assumed,
    addRole: (roleArn: string, role: AwsRole) => roles.set(roleArn, role),
  };
};
