import { createHash } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { verifySigV4, type StsCaller } from "./workload-peers";

/**
 * What the fake AWS services share (the signature check, errors, field readers, paging), and AWS
 * Systems Manager Parameter Store's operations over a map of parameters the test seeds and inspects.
 */

/** An error as the JSON 1.1 services answer it: HTTP 400 with `{"__type": code, "message"}`. */
export class AwsError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

export type Tag = { Key: string; Value: string };
export type JsonBody = Record<string, unknown>;
/** Who is calling and where: ARNs are built from the caller's account and the fake's region. */
export type CallContext = { account: string; region: string };
export type Operation = (input: JsonBody, context: CallContext) => JsonBody;

/** The message AWS's input validation gives, naming the field as its model does (camelCase). */
const invalid = (field: string, value: unknown, constraint: string) =>
  new AwsError(
    "ValidationException",
    `1 validation error detected: Value ${value === undefined ? "null" : `'${typeof value === "string" ? value : JSON.stringify(value)}'`} at '${field[0]!.toLowerCase()}${field.slice(1)}' failed to satisfy constraint: ${constraint}`,
  );

/** A string field, or undefined when absent; a value of another type is a validation error. */
export const optString = (input: JsonBody, field: string) => {
  const value = input[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw invalid(field, value, "Member must be a string");
  return value;
};

/** A required string field. */
export const reqString = (input: JsonBody, field: string) => {
  const value = optString(input, field);
  if (value === undefined) throw invalid(field, value, "Member must not be null");
  return value;
};

/** A boolean field (false when absent). */
export const flag = (input: JsonBody, field: string) => input[field] === true;

/** A whole-number field within [min, max], or `fallback` when absent. */
export const count = (input: JsonBody, field: string, min: number, max: number, fallback: number) => {
  const value = input[field];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value)) throw invalid(field, value, "Member must be a number");
  if (value < min) throw invalid(field, value, `Member must have value greater than or equal to ${min}`);
  if (value > max) throw invalid(field, value, `Member must have value less than or equal to ${max}`);
  return value;
};

/** A list field of at most `max` members (empty when absent). */
export const list = <T>(input: JsonBody, field: string, max = Infinity): T[] => {
  const value = input[field];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw invalid(field, value, "Member must be a list");
  if (value.length > max) throw invalid(field, "[...]", `Member must have length less than or equal to ${max}`);
  return value as T[];
};

/** A list of tags, each with a string Key and Value. */
export const tagList = (input: JsonBody, field: string) =>
  list<Tag>(input, field, 50).map((tag) => {
    if (typeof tag?.Key !== "string" || typeof tag.Value !== "string") throw invalid(field, "[...]", "Bad tag");
    return { Key: tag.Key, Value: tag.Value };
  });

/** `tags` with `added` put in (an added key replaces the value of one already there). */
export const mergeTags = (tags: Tag[], added: Tag[]) => [
  ...tags.filter((tag) => !added.some((a) => a.Key === tag.Key)),
  ...added,
];

/** A time as the JSON protocols carry it: seconds since the epoch, as a number. */
export const epoch = (date: Date) => date.getTime() / 1000;

/**
 * One page of `names` (sorted) from the one after the token's name, at most `max` long. The token
 * names the last name given out, so a page stays right when entries come and go between calls.
 */
export const pageOf = (names: string[], max: number, token: unknown, badToken: AwsError) => {
  let start = 0;
  if (token !== undefined && token !== null) {
    if (typeof token !== "string" || !token.startsWith("kw1.")) throw badToken;
    const after = Buffer.from(token.slice(4), "base64url").toString("utf8");
    start = names.findIndex((name) => name > after);
    if (start < 0) start = names.length;
  }
  const page = names.slice(start, start + max);
  const more = start + max < names.length;
  return { page, next: more ? `kw1.${Buffer.from(page.at(-1)!).toString("base64url")}` : undefined };
};

export type AwsService = "secretsmanager" | "ssm" | "sts";
/** AWS's words for a signature that does not match. */
export const SIGNATURE_MISMATCH =
  "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.";
const SKEW_MS = 15 * 60_000;

/** A time in SigV4's basic ISO 8601 form (20260102T030405Z). */
const amzTime = (ms: number) =>
  new Date(ms)
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d{3}/, "");

/** Reads the x-amz-date header's time (NaN when it is malformed). */
const parseAmzDate = (value: string) => {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  return m ? Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!) : NaN;
};

/**
 * The caller a request is signed by, or the error AWS would refuse it with: a known access key, a
 * scope dated as the request, for the fake's region and the right service, a time within 15 minutes
 * of now, a payload hash that matches the body, and a signature that matches.
 */
export const authenticate = (
  req: IncomingMessage,
  body: string,
  service: AwsService,
  region: string,
  callers: Record<string, StsCaller>,
) => {
  const header = req.headers.authorization;
  if (!header) return new AwsError("MissingAuthenticationTokenException", "Missing Authentication Token");
  const scope = /Credential=([^/,\s]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request/.exec(header);
  if (!scope)
    return new AwsError("IncompleteSignatureException", "Authorization header requires 'Credential' parameter.");
  const [, keyId = "", date = "", scopeRegion = "", scopeService = ""] = scope;
  if (!callers[keyId])
    return new AwsError("UnrecognizedClientException", "The security token included in the request is invalid.");
  const amzDate = String(req.headers["x-amz-date"] ?? "");
  const signedAt = parseAmzDate(amzDate);
  if (Number.isNaN(signedAt))
    return new AwsError(
      "IncompleteSignatureException",
      "Authorization header requires existence of a 'X-Amz-Date' header.",
    );
  const bad = (message: string) => new AwsError("InvalidSignatureException", message);
  if (date !== amzDate.slice(0, 8))
    return bad(
      `Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '${date}' != '${amzDate.slice(0, 8)}', from '${amzDate}'.`,
    );
  const now = Date.now();
  if (signedAt < now - SKEW_MS)
    return bad(
      `Signature expired: ${amzDate} is now earlier than ${amzTime(now - SKEW_MS)} (${amzTime(now)} - 15 min.)`,
    );
  if (signedAt > now + SKEW_MS)
    return bad(
      `Signature not yet current: ${amzDate} is still later than ${amzTime(now + SKEW_MS)} (${amzTime(now)} + 15 min.)`,
    );
  if (scopeRegion !== region) return bad("Credential should be scoped to a valid region.");
  if (scopeService !== service) return bad(`Credential should be scoped to correct service: '${service}'.`);
  const declared = req.headers["x-amz-content-sha256"];
  if (typeof declared === "string" && declared !== createHash("sha256").update(body).digest("hex"))
    return bad("The provided 'x-amz-content-sha256' header does not match what was computed.");
  return verifySigV4(req, body, callers) ?? bad(SIGNATURE_MISMATCH);
};

/** A parameter as the fake stores it (`keyId` absent: the account's default key, alias/aws/ssm). */
export type StoredParameter = {
  value: string;
  type: string;
  keyId?: string;
  version: number;
  lastModifiedAt: Date;
  tags?: Tag[];
};

const TYPES = ["SecureString", "StringList", "String"];
const NAME_RULE =
  'Parameter name: can\'t be prefixed with "aws" or "ssm" (case-insensitive). If formed as a path, it can consist of sub-paths divided by slash symbol; each sub-path can be formed as a mix of letters, numbers and the following 3 symbols .-_';
const BAD_TOKEN = new AwsError("InvalidNextToken", "The specified token isn't valid.");

/** A name as a path from the root: `foo` and `/foo` both sit directly under `/`. */
const rooted = (name: string) => (name.startsWith("/") ? name : `/${name}`);

/** Whether `name` is under `path`: directly, or at any depth when `recursive`. */
const isUnder = (name: string, path: string, recursive: boolean) => {
  const base = path === "/" ? "/" : `${path.replace(/\/+$/, "")}/`;
  const full = rooted(name);
  return full.startsWith(base) && (recursive || !full.slice(base.length).includes("/"));
};

/** A path must start with a slash, as GetParametersByPath and the Path filter require. */
const checkPath = (path: string) => {
  if (!/^\/[\w.\-/]*$/.test(path)) throw new AwsError("ValidationException", `Invalid path. ${NAME_RULE}`);
};

/** The name rules PutParameter enforces: one plain name, or a path of them from the root; no aws or ssm prefix. */
const checkName = (name: string) => {
  if (name.length > 2048 || !/^([\w.-]+|(\/[\w.-]+)+)$/.test(name) || /^\/?(aws|ssm)/i.test(name))
    throw new AwsError("ValidationException", NAME_RULE);
  if (rooted(name).split("/").length - 1 > 15)
    throw new AwsError(
      "HierarchyLevelLimitExceededException",
      "A hierarchy can have a maximum of 15 levels. For more information, see Requirements and constraints for parameter names in the AWS Systems Manager User Guide.",
    );
};

/** Operations of Parameter Store, by the `X-Amz-Target` operation name. */
export const ssmOperations = (parameters: Map<string, StoredParameter>): Record<string, Operation> => {
  const arnOf = (name: string, { region, account }: CallContext) =>
    `arn:aws:ssm:${region}:${account}:parameter${rooted(name)}`;

  /** A SecureString read without decryption gives ciphertext, never the value. */
  const valueOf = (p: StoredParameter, decrypt: boolean) =>
    p.type === "SecureString" && !decrypt
      ? `AQICAH${createHash("sha256")
          .update(`${p.keyId ?? "alias/aws/ssm"}:${p.version}:${p.value}`)
          .digest("base64")}`
      : p.value;

  /** The fields a parameter's value and its description share. */
  const common = (name: string, p: StoredParameter, context: CallContext) => ({
    Name: name,
    ARN: arnOf(name, context),
    Type: p.type,
    Version: p.version,
    LastModifiedDate: epoch(p.lastModifiedAt),
    DataType: "text",
  });
  const view = (name: string, p: StoredParameter, decrypt: boolean, context: CallContext) => ({
    ...common(name, p, context),
    Value: valueOf(p, decrypt),
  });
  const metadata = (name: string, p: StoredParameter, context: CallContext) => ({
    ...common(name, p, context),
    KeyId: p.type === "SecureString" ? (p.keyId ?? "alias/aws/ssm") : undefined,
    Tier: "Standard",
    Policies: [],
  });

  const find = (name: string) => {
    const found = parameters.get(name);
    if (!found) throw new AwsError("ParameterNotFound", `Parameter ${name} not found.`);
    return found;
  };

  /** The parameter a tagging call names, after checking its resource type. */
  const resource = (input: JsonBody) => {
    if (reqString(input, "ResourceType") !== "Parameter")
      throw new AwsError("InvalidResourceType", "The resource type isn't valid.");
    const found = parameters.get(reqString(input, "ResourceId"));
    if (!found)
      throw new AwsError(
        "InvalidResourceId",
        "The resource ID isn't valid. Verify that you entered the correct ID and try again.",
      );
    return found;
  };

  const sortedNames = (keep: (name: string, p: StoredParameter) => boolean) =>
    [...parameters.keys()].filter((name) => keep(name, parameters.get(name)!)).sort();

  /** What one ParameterFilters entry of DescribeParameters keeps. */
  const describeFilter = (filter: { Key?: string; Option?: string; Values?: string[] }) => {
    const values = filter.Values ?? [];
    const option = filter.Option;
    const badOption = () =>
      new AwsError("InvalidFilterOption", `The filter option ${String(option)} is not valid for key ${filter.Key}`);
    if (filter.Key === "Path") {
      if (option !== undefined && option !== "OneLevel" && option !== "Recursive") throw badOption();
      values.forEach(checkPath);
      return (name: string) => values.some((path) => isUnder(name, path, option === "Recursive"));
    }
    if (filter.Key === "Name") {
      if (option !== undefined && option !== "Equals" && option !== "BeginsWith") throw badOption();
      return (name: string) => values.some((v) => (option === "BeginsWith" ? name.startsWith(v) : name === v));
    }
    if (filter.Key === "Type") {
      if (option !== undefined && option !== "Equals") throw badOption();
      return (_name: string, p: StoredParameter) => values.includes(p.type);
    }
    throw new AwsError("InvalidFilterKey", `The following filter key is not valid: ${String(filter.Key)}`);
  };

  return {
    GetParameter: (input, context) => {
      const name = reqString(input, "Name");
      return { Parameter: view(name, find(name), flag(input, "WithDecryption"), context) };
    },
    GetParameters: (input, context) => {
      const names = list<string>(input, "Names", 10);
      const found = names.filter((name) => parameters.has(name));
      return {
        Parameters: found.map((name) => view(name, parameters.get(name)!, flag(input, "WithDecryption"), context)),
        InvalidParameters: names.filter((name) => !parameters.has(name)),
      };
    },
    GetParametersByPath: (input, context) => {
      const path = reqString(input, "Path");
      checkPath(path);
      const max = count(input, "MaxResults", 1, 10, 10);
      if (list(input, "ParameterFilters").length > 0)
        throw new AwsError("InvalidFilterKey", "The fake takes no ParameterFilters here.");
      const names = sortedNames((name) => isUnder(name, path, flag(input, "Recursive")));
      const { page, next } = pageOf(names, max, input.NextToken, BAD_TOKEN);
      return {
        Parameters: page.map((name) => view(name, parameters.get(name)!, flag(input, "WithDecryption"), context)),
        NextToken: next,
      };
    },
    PutParameter: (input) => {
      const name = reqString(input, "Name");
      const value = reqString(input, "Value");
      const type = optString(input, "Type");
      const keyId = optString(input, "KeyId");
      const tags = tagList(input, "Tags");
      const existing = parameters.get(name);
      checkName(name);
      if (type !== undefined && !TYPES.includes(type))
        throw new AwsError(
          "ValidationException",
          `1 validation error detected: Value '${type}' at 'type' failed to satisfy constraint: Member must satisfy enum value set: [${TYPES.join(", ")}]`,
        );
      if (tags.length > 0 && flag(input, "Overwrite"))
        throw new AwsError(
          "ValidationException",
          "Invalid request: tags and overwrite can't be used together. To create a parameter with tags, please remove overwrite flag. To update tags for an existing parameter, please use AddTagsToResource or RemoveTagsFromResource.",
        );
      if (existing && !flag(input, "Overwrite"))
        throw new AwsError(
          "ParameterAlreadyExists",
          "The parameter already exists. To overwrite this value, set the overwrite option in the request to true.",
        );
      const finalType = type ?? existing?.type;
      if (finalType === undefined) throw new AwsError("ValidationException", "Parameter Type is not supplied.");
      if (keyId !== undefined && finalType !== "SecureString")
        throw new AwsError("ValidationException", "KeyId is required for SecureString type parameter only.");
      const limit = optString(input, "Tier") === "Advanced" ? 8192 : 4096;
      if (value.length === 0 || value.length > limit)
        throw new AwsError(
          "ValidationException",
          value.length === 0
            ? "1 validation error detected: Value '' at 'value' failed to satisfy constraint: Member must have length greater than or equal to 1"
            : "Standard tier parameters support a maximum parameter value of 4096 characters. To create a larger parameter value, upgrade the parameter to use the advanced-parameter tier.",
        );
      const version = (existing?.version ?? 0) + 1;
      parameters.set(name, {
        value,
        type: finalType,
        keyId,
        version,
        lastModifiedAt: new Date(),
        tags: existing ? existing.tags : tags,
      });
      return { Version: version, Tier: limit > 4096 ? "Advanced" : "Standard" };
    },
    DeleteParameter: (input) => {
      const name = reqString(input, "Name");
      find(name);
      parameters.delete(name);
      return {};
    },
    DeleteParameters: (input) => {
      const names = list<string>(input, "Names", 10);
      if (names.length === 0) throw invalid("Names", "[]", "Member must have length greater than or equal to 1");
      const deleted = names.filter((name) => parameters.delete(name));
      return { DeletedParameters: deleted, InvalidParameters: names.filter((name) => !deleted.includes(name)) };
    },
    DescribeParameters: (input, context) => {
      const max = count(input, "MaxResults", 1, 50, 50);
      const filters = list<{ Key?: string; Option?: string; Values?: string[] }>(input, "ParameterFilters");
      const keeps = filters.map(describeFilter);
      const names = sortedNames((name, p) => keeps.every((keep) => keep(name, p)));
      const { page, next } = pageOf(names, max, input.NextToken, BAD_TOKEN);
      return { Parameters: page.map((name) => metadata(name, parameters.get(name)!, context)), NextToken: next };
    },
    ListTagsForResource: (input) => ({ TagList: resource(input).tags ?? [] }),
    AddTagsToResource: (input) => {
      const found = resource(input);
      const tags = mergeTags(found.tags ?? [], tagList(input, "Tags"));
      if (tags.length > 50) throw new AwsError("TooManyTagsError", "You can add up to 50 tags to a resource.");
      found.tags = tags;
      return {};
    },
    RemoveTagsFromResource: (input) => {
      const found = resource(input);
      const keys = list<string>(input, "TagKeys");
      found.tags = (found.tags ?? []).filter((tag) => !keys.includes(tag.Key));
      return {};
    },
  };
};
