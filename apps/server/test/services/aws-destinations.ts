import { randomBytes, randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import {
  AwsError,
  type AwsService,
  SIGNATURE_MISMATCH,
  authenticate,
  type CallContext,
  type JsonBody,
  type Operation,
  type StoredParameter,
  type Tag,
  count,
  epoch,
  flag,
  list,
  mergeTags,
  optString,
  pageOf,
  reqString,
  ssmOperations,
  tagList,
} from "./aws-destinations-ssm";
import { type AwsRole, STS_CODES, answer, stsError, stsOf } from "./aws-destinations-sts";
import { startPeer, type StsCaller, type TestCa } from "./workload-peers";
export type { AssumedRole, AwsRole } from "./aws-destinations-sts";

/**
 * AWS as a secret sync's destination, on one HTTPS server: Secrets Manager and Systems Manager
 * Parameter Store (JSON 1.1, by `X-Amz-Target`) and STS (query protocol). Every request must be
 * signed (SigV4) by a known access key for the fake's region and the service it speaks to, as AWS
 * checks, so a client that signs wrongly fails here as it would there.
 */

export type AwsMode = "ok" | "500" | "bad-signature";
export type AwsCall = { service: AwsService; operation: string; accessKeyId: string; region: string };
export type StoredSecret = {
  arn: string;
  value: string;
  kmsKeyId?: string;
  tags: Tag[];
  deletedAt?: Date;
  versionId: string;
  createdAt: Date;
  lastChangedAt: Date;
};
export type { AwsService, StoredParameter, Tag } from "./aws-destinations-ssm";

const MARKED_FOR_DELETION = "You can't perform this operation on the secret because it was marked for deletion.";
/** A JSON 1.1 answer. */
const json = (res: ServerResponse, status: number, body: unknown) =>
  answer(res, status, "application/x-amz-json-1.1", JSON.stringify(body));

/** The service and operation a request addresses, by its target header or its form body. */
const route = (req: IncomingMessage, body: string): { service: AwsService; operation: string } | undefined => {
  const target = req.headers["x-amz-target"];
  if (typeof target === "string") {
    const [prefix, operation = ""] = target.split(".");
    const service = prefix === "secretsmanager" ? "secretsmanager" : prefix === "AmazonSSM" ? "ssm" : undefined;
    return service ? { service, operation } : undefined;
  }
  if (String(req.headers["content-type"]).startsWith("application/x-www-form-urlencoded"))
    return { service: "sts", operation: new URLSearchParams(body).get("Action") ?? "" };
  return undefined;
};

/** A secret's ARN: its name and six random characters, as Secrets Manager makes them. */
export const secretArn = (region: string, account: string, name: string) =>
  `arn:aws:secretsmanager:${region}:${account}:secret:${name}-${randomBytes(6).toString("base64url").slice(0, 6)}`;

/** Operations of Secrets Manager, by the `X-Amz-Target` operation name. */
const secretsManagerOperations = (secrets: Map<string, StoredSecret>): Record<string, Operation> => {
  const notFound = () => new AwsError("ResourceNotFoundException", "Secrets Manager can't find the specified secret.");
  const badToken = new AwsError("InvalidNextTokenException", "The NextToken value is invalid.");

  /** The secret a SecretId names: by name, by full ARN, or by the ARN without its random suffix. */
  const lookup = (id: string): [string, StoredSecret] | undefined => {
    const byName = secrets.get(id);
    if (byName) return [id, byName];
    return [...secrets].find(([, s]) => s.arn === id || (s.arn.startsWith(`${id}-`) && s.arn.length === id.length + 7));
  };
  const find = (input: JsonBody, allowDeleted = false) => {
    const found = lookup(reqString(input, "SecretId"));
    if (!found) throw notFound();
    if (found[1].deletedAt && !allowDeleted) throw new AwsError("InvalidRequestException", MARKED_FOR_DELETION);
    return found;
  };
  /** A new value: the value, a new version id (the SDK's idempotency token when given), the change time. */
  const setValue = (secret: StoredSecret, input: JsonBody, value: string) => {
    if (value.length > 65536)
      throw new AwsError("InvalidParameterException", "The SecretString parameter can't exceed 65536 characters.");
    secret.value = value;
    secret.versionId = optString(input, "ClientRequestToken") ?? randomUUID();
    secret.lastChangedAt = new Date();
  };
  /** Only text values are kept: a binary value is refused rather than stored wrongly. */
  const stringValue = (input: JsonBody) => {
    if (input.SecretBinary !== undefined)
      throw new AwsError("InvalidParameterException", "This fake stores SecretString values only.");
    return optString(input, "SecretString");
  };
  const described = ([name, s]: [string, StoredSecret]) => ({
    ARN: s.arn,
    Name: name,
    KmsKeyId: s.kmsKeyId,
    Tags: s.tags,
    LastChangedDate: epoch(s.lastChangedAt),
    CreatedDate: epoch(s.createdAt),
    DeletedDate: s.deletedAt && epoch(s.deletedAt),
    SecretVersionsToStages: { [s.versionId]: ["AWSCURRENT"] },
  });
  const valueOf = ([name, s]: [string, StoredSecret]) => ({
    ARN: s.arn,
    Name: name,
    VersionId: s.versionId,
    SecretString: s.value,
    VersionStages: ["AWSCURRENT"],
    CreatedDate: epoch(s.lastChangedAt),
  });

  return {
    ListSecrets: (input) => {
      const max = count(input, "MaxResults", 1, 100, 100);
      if (list(input, "Filters").length > 0)
        throw new AwsError("InvalidParameterException", "The fake takes no Filters.");
      const include = flag(input, "IncludePlannedDeletion");
      const names = [...secrets].filter(([, s]) => include || !s.deletedAt).map(([name]) => name);
      const { page, next } = pageOf(names.sort(), max, input.NextToken, badToken);
      return { SecretList: page.map((name) => described([name, secrets.get(name)!])), NextToken: next };
    },
    BatchGetSecretValue: (input) => {
      const ids = list<string>(input, "SecretIdList", 20);
      if (ids.length === 0 || input.Filters !== undefined)
        throw new AwsError(
          "InvalidParameterException",
          "The fake takes a SecretIdList of 1 to 20 ids, and no Filters.",
        );
      const found = ids.map((id) => ({ id, entry: lookup(id) }));
      const error = (id: string, entry: [string, StoredSecret] | undefined) =>
        entry
          ? { SecretId: id, ErrorCode: "InvalidRequestException", Message: MARKED_FOR_DELETION }
          : { SecretId: id, ErrorCode: "ResourceNotFoundException", Message: notFound().message };
      return {
        SecretValues: found.filter(({ entry }) => entry && !entry[1].deletedAt).map(({ entry }) => valueOf(entry!)),
        Errors: found.filter(({ entry }) => !entry || entry[1].deletedAt).map(({ id, entry }) => error(id, entry)),
      };
    },
    GetSecretValue: (input) => valueOf(find(input)),
    DescribeSecret: (input) => described(find(input, true)),
    CreateSecret: (input, context) => {
      const name = reqString(input, "Name");
      if (!/^[A-Za-z0-9/_+=.@!-]{1,512}$/.test(name))
        throw new AwsError(
          "ValidationException",
          "Invalid name. Must be a valid name containing alphanumeric characters, or any of the following: -/_+=.@!",
        );
      const existing = secrets.get(name);
      if (existing?.deletedAt)
        throw new AwsError(
          "InvalidRequestException",
          "You can't create this secret because a secret with this name is already scheduled for deletion.",
        );
      if (existing)
        throw new AwsError(
          "ResourceExistsException",
          `The operation failed because the secret ${name} already exists.`,
        );
      const value = stringValue(input);
      if (value === undefined)
        throw new AwsError("InvalidParameterException", "This fake creates secrets with a SecretString only.");
      const now = new Date();
      const secret: StoredSecret = {
        arn: secretArn(context.region, context.account, name),
        value: "",
        kmsKeyId: optString(input, "KmsKeyId"),
        tags: tagList(input, "Tags"),
        versionId: "",
        createdAt: now,
        lastChangedAt: now,
      };
      setValue(secret, input, value);
      secrets.set(name, secret);
      return { ARN: secret.arn, Name: name, VersionId: secret.versionId };
    },
    PutSecretValue: (input) => {
      const [name, secret] = find(input);
      const value = stringValue(input);
      if (value === undefined)
        throw new AwsError("InvalidParameterException", "You must provide either SecretString or SecretBinary.");
      setValue(secret, input, value);
      return { ARN: secret.arn, Name: name, VersionId: secret.versionId, VersionStages: ["AWSCURRENT"] };
    },
    UpdateSecret: (input) => {
      const [name, secret] = find(input);
      const value = stringValue(input);
      const kmsKeyId = optString(input, "KmsKeyId");
      if (kmsKeyId !== undefined) secret.kmsKeyId = kmsKeyId;
      secret.lastChangedAt = new Date();
      if (value === undefined) return { ARN: secret.arn, Name: name };
      setValue(secret, input, value);
      return { ARN: secret.arn, Name: name, VersionId: secret.versionId };
    },
    DeleteSecret: (input) => {
      const force = flag(input, "ForceDeleteWithoutRecovery");
      if (force && input.RecoveryWindowInDays !== undefined)
        throw new AwsError(
          "InvalidParameterException",
          "You can't use ForceDeleteWithoutRecovery in conjunction with RecoveryWindowInDays.",
        );
      const [name, secret] = find(input, force);
      const now = new Date();
      if (force) {
        secrets.delete(name);
        return { ARN: secret.arn, Name: name, DeletionDate: epoch(now) };
      }
      const days = input.RecoveryWindowInDays ?? 30;
      if (typeof days !== "number" || !Number.isInteger(days) || days < 7 || days > 30)
        throw new AwsError(
          "InvalidParameterException",
          "The RecoveryWindowInDays value must be between 7 and 30 days (inclusive).",
        );
      secret.deletedAt = now;
      return { ARN: secret.arn, Name: name, DeletionDate: epoch(new Date(now.getTime() + days * 86_400_000)) };
    },
    RestoreSecret: (input) => {
      const [name, secret] = find(input, true);
      delete secret.deletedAt;
      return { ARN: secret.arn, Name: name };
    },
    TagResource: (input) => {
      const [, secret] = find(input);
      secret.tags = mergeTags(secret.tags, tagList(input, "Tags"));
      return {};
    },
    UntagResource: (input) => {
      const [, secret] = find(input);
      const keys = list<string>(input, "TagKeys");
      secret.tags = secret.tags.filter((tag) => !keys.includes(tag.Key));
      return {};
    },
  };
};

/**
 * Options of the fake: its region, the access keys it knows by access key id, and the roles (by ARN)
 * those keys may assume (an assumed role's key then signs with its session token, as AWS requires).
 */
export type AwsFakeOptions = { region?: string; callers: Record<string, StsCaller>; roles?: Record<string, AwsRole> };

/**
 * Starts the fake. `secrets` and `parameters` hold its state (seed and inspect them), `calls` every
 * call that passed the signature check, `refused` how many were refused for their signature or key;
 * `setMode` makes a service (or all) answer 500s or refuse every signature.
 */
export const startAwsFake = async (ca: TestCa, options: AwsFakeOptions) => {
  const region = options.region ?? "us-east-1";
  const secrets = new Map<string, StoredSecret>();
  const parameters = new Map<string, StoredParameter>();
  const calls: AwsCall[] = [];
  const modes = new Map<AwsService, AwsMode>();
  const stats = { refused: 0 };
  const operations: Record<"secretsmanager" | "ssm", Record<string, Operation>> = {
    secretsmanager: secretsManagerOperations(secrets),
    ssm: ssmOperations(parameters),
  };

  /** An error as the addressed service words it: JSON for the JSON services, XML (403) for STS. */
  const fail = (res: ServerResponse, service: AwsService, error: AwsError) =>
    service === "sts"
      ? stsError(res, error.status >= 500 ? error.status : 403, STS_CODES[error.code] ?? error.code, error.message)
      : json(res, error.status, { __type: error.code, message: error.message });

  const stsService = stsOf(options.callers, options.roles);

  /** One JSON 1.1 call: the body parsed, the operation run, its error worded as AWS does. */
  const jsonCall = (res: ServerResponse, req: IncomingMessage, body: string, call: AwsCall, context: CallContext) => {
    const operation = operations[call.service as "secretsmanager" | "ssm"][call.operation];
    if (!req.headers["content-type"]?.startsWith("application/x-amz-json-1.1") || !operation)
      return json(res, 400, { __type: "UnknownOperationException" });
    let input: JsonBody;
    try {
      const parsed = JSON.parse(body || "{}") as unknown;
      if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("not an object");
      input = parsed as JsonBody;
    } catch {
      return json(res, 400, {
        __type: "SerializationException",
        message: "Start of structure or map found where not expected.",
      });
    }
    try {
      json(res, 200, operation(input, context));
    } catch (error) {
      fail(res, call.service, error instanceof AwsError ? error : new AwsError("InternalFailure", String(error), 500));
    }
  };

  const peer = await startPeer(ca, (req, body, res) => {
    const routed = req.method === "POST" ? route(req, body) : undefined;
    if (!routed) return json(res, 400, { __type: "UnknownOperationException" });
    const { service, operation } = routed;
    const caller =
      modes.get(service) === "bad-signature"
        ? new AwsError("InvalidSignatureException", SIGNATURE_MISMATCH)
        : authenticate(req, body, service, region, stsService.callers);
    // An assumed role's key is valid only with its session token, signed with the request.
    if (!(caller instanceof AwsError) && stsService.lacksSessionToken(req, caller.accessKeyId)) {
      stats.refused += 1;
      return fail(
        res,
        service,
        new AwsError("UnrecognizedClientException", "The security token included in the request is invalid."),
      );
    }
    if (caller instanceof AwsError) {
      stats.refused += 1;
      return fail(res, service, caller);
    }
    const call: AwsCall = { service, operation, accessKeyId: caller.accessKeyId, region: caller.region };
    calls.push(call);
    if (modes.get(service) === "500")
      return fail(
        res,
        service,
        new AwsError("InternalFailure", "The request processing has failed because of an unknown error.", 500),
      );
    if (service === "sts") return stsService.sts(res, body, caller);
    jsonCall(res, req, body, call, { account: caller.account, region });
  });

  return {
    ...peer,
    region,
    secrets,
    parameters,
    calls,
    /** Every role assumed, in order. */
    assumed: stsService.assumed,
    /** Lets a role be assumed from now on (its trust policy: the keys it trusts and its external id). */
    addRole: stsService.addRole,
    /** How many calls were refused for their signature or credentials. */
    get refused() {
      return stats.refused;
    },
    /** Makes one service, or all, answer normally, with HTTP 500, or as if no signature matched. */
    setMode: (service: AwsService | "all", mode: AwsMode) => {
      for (const s of service === "all" ? (["secretsmanager", "ssm", "sts"] as const) : [service]) modes.set(s, mode);
    },
    /** Puts a secret in place as if created by `account` (the first caller's by default). */
    seedSecret: (name: string, value: string, extra: Partial<StoredSecret> = {}) => {
      const account = Object.values(options.callers)[0]?.account ?? "000000000000";
      const now = new Date();
      const secret: StoredSecret = {
        arn: secretArn(region, account, name),
        value,
        tags: [],
        versionId: randomUUID(),
        createdAt: now,
        lastChangedAt: now,
        ...extra,
      };
      secrets.set(name, secret);
      return secret;
    },
  };
};

export type AwsFake = Awaited<ReturnType<typeof startAwsFake>>;
