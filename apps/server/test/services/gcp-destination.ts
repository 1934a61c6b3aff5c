import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { compactVerify, decodeProtectedHeader, exportPKCS8, generateKeyPair } from "jose";
import { startPeer, type TestCa } from "./workload-peers";

/**
 * Google Cloud Secret Manager (v1 REST) as a secret sync's destination, with Google's OAuth 2.0
 * token endpoint for service accounts on the same HTTPS server. As Google does, the token endpoint
 * takes only an RS256 JWT signed by the service account's key, for itself as audience, short-lived
 * and asking for the cloud-platform scope; Secret Manager takes only a token it issued, for its own
 * project, and checks secret ids, payload sizes and checksums. Values are kept as text for the test.
 */

export type GcpSecret = { versions: string[]; createdAt: Date; labels?: Record<string, string> };
export type GcpMode = "ok" | "500" | "unauthorized";
export type GcpCall = { method: string; path: string };
export type GcpFakeOptions = { projectId: string };
/** A service-account key file as the Google console downloads it (the fields a client reads). */
export type ServiceAccountKey = {
  type: "service_account";
  project_id: string;
  private_key_id: string;
  private_key: string;
  client_email: string;
  client_id: string;
  token_uri: string;
};
type Refusal = { error: string; error_description: string };
type Operation = { permission: string; resource: string; run: () => void };

const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const CLOUD_PLATFORM = "https://www.googleapis.com/auth/cloud-platform";
const SECRET_ID = /^[a-zA-Z0-9_-]{1,255}$/;
const LABEL_KEY = /^[a-z][a-z0-9_-]{0,62}$/;
const LABEL_VALUE = /^[a-z0-9_-]{0,63}$/;
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;
const MAX_PAYLOAD_BYTES = 64 * 1024;
const MAX_PAGE_SIZE = 250;
const TOKEN_SECONDS = 3599;
const MAX_ASSERTION_SECONDS = 3600;
/** How far in the future an assertion's `iat` may be: clocks of callers drift a little. */
const CLOCK_SKEW_SECONDS = 300;
const STATUS: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  409: "ALREADY_EXISTS",
  500: "INTERNAL",
};
const BAD_SIGNATURE: Refusal = { error: "invalid_grant", error_description: "Invalid JWT Signature." };
const BAD_TIMES: Refusal = {
  error: "invalid_grant",
  error_description:
    "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.",
};
const BAD_SCOPE: Refusal = {
  error: "invalid_scope",
  error_description: "Invalid OAuth scope or ID token audience provided.",
};

/** The CRC32C (Castagnoli) table: Secret Manager checksums payloads with CRC32C. */
const CRC32C_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k += 1) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

/** The CRC32C of some bytes, as Secret Manager gives and checks it (`dataCrc32c`). */
export const crc32c = (data: Buffer) => {
  let crc = 0xffffffff;
  for (const byte of data) crc = CRC32C_TABLE[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
};

/** Answers with JSON. */
const send = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { "content-type": "application/json; charset=UTF-8" });
  res.end(JSON.stringify(body));
};

/** An error in Google's API shape: the HTTP code, its canonical status name and a message. */
const googleError = (res: ServerResponse, code: number, message: string) =>
  send(res, code, { error: { code, message, status: STATUS[code] ?? "UNKNOWN" } });

/** A JSON object from a request body, or undefined when the body is not one. */
const parseObject = (body: string): Record<string, unknown> | undefined => {
  try {
    const parsed = JSON.parse(body || "{}") as unknown;
    return parsed && typeof parsed === "object" && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
};

/** A path segment decoded, or as it came when it is not valid percent-encoding. */
const decode = (segment: string) => {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
};

/** Whether a value is a plain object (not null, not an array). */
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Whether a create request's replication is one Secret Manager takes: automatic, or user-managed with replicas. */
const validReplication = (replication: unknown) =>
  isObject(replication) &&
  (isObject(replication.automatic) ||
    (isObject(replication.userManaged) &&
      Array.isArray(replication.userManaged.replicas) &&
      replication.userManaged.replicas.length > 0));

/** A create request's labels when they are valid ones (lower-case keys and values), else an error message. */
const readLabels = (labels: unknown): Record<string, string> | string | undefined => {
  if (labels === undefined) return undefined;
  if (!isObject(labels)) return "Invalid value at 'secret.labels'.";
  const entries = Object.entries(labels);
  const bad = entries.find(([k, v]) => !LABEL_KEY.test(k) || typeof v !== "string" || !LABEL_VALUE.test(v));
  return bad ? `Invalid label: ${bad[0]}.` : Object.fromEntries(entries as [string, string][]);
};

/** Starts the fake for one project; its service account's key is made here and known only to it and the test. */
export const startGcpFake = async (ca: TestCa, options: GcpFakeOptions) => {
  const { projectId } = options;
  const { publicKey, privateKey } = await generateKeyPair("RS256", { extractable: true });
  const secrets = new Map<string, GcpSecret>();
  const tokens = new Map<string, number>();
  const calls: GcpCall[] = [];
  const stats = { tokensIssued: 0 };
  let mode: GcpMode = "ok";
  let tokenUrl = "";
  const clientEmail = `keyward@${projectId}.iam.gserviceaccount.com`;
  const privateKeyId = randomBytes(20).toString("hex");

  /** Why an assertion is refused, or undefined when it earns a token: signature, issuer, audience, times, scope. */
  const checkAssertion = async (assertion: string): Promise<Refusal | undefined> => {
    let payload: Record<string, unknown> | undefined;
    try {
      const header = decodeProtectedHeader(assertion);
      if (header.alg !== "RS256" || (header.kid !== undefined && header.kid !== privateKeyId)) return BAD_SIGNATURE;
      const verified = await compactVerify(assertion, publicKey, { algorithms: ["RS256"] });
      payload = parseObject(Buffer.from(verified.payload).toString("utf8"));
    } catch {
      return BAD_SIGNATURE;
    }
    if (!payload) return BAD_SIGNATURE;
    if (payload.iss !== clientEmail)
      return { error: "invalid_grant", error_description: "Invalid grant: account not found" };
    if (payload.aud !== tokenUrl)
      return {
        error: "invalid_grant",
        error_description: `Invalid JWT: Failed audience check. The right audience is ${tokenUrl}`,
      };
    const { iat, exp } = payload;
    const now = Date.now() / 1000;
    if (typeof iat !== "number" || typeof exp !== "number") return BAD_TIMES;
    if (exp <= iat || exp - iat > MAX_ASSERTION_SECONDS || exp <= now || iat > now + CLOCK_SKEW_SECONDS)
      return BAD_TIMES;
    if (typeof payload.scope !== "string" || !payload.scope.split(" ").includes(CLOUD_PLATFORM)) return BAD_SCOPE;
    return undefined;
  };

  /** `POST /token`: a JWT-bearer grant exchanged for a new access token, remembered with its expiry. */
  const token = async (res: ServerResponse, body: string) => {
    const form = new URLSearchParams(body);
    const grantType = form.get("grant_type") ?? "";
    if (grantType !== JWT_BEARER)
      return send(res, 400, { error: "unsupported_grant_type", error_description: `Invalid grant_type: ${grantType}` });
    const assertion = form.get("assertion");
    if (!assertion)
      return send(res, 400, { error: "invalid_request", error_description: "Missing required parameter: assertion" });
    const refusal = mode === "unauthorized" ? BAD_SIGNATURE : await checkAssertion(assertion);
    if (refusal) return send(res, 400, refusal);
    const accessToken = `ya29.${randomBytes(32).toString("base64url")}`;
    tokens.set(accessToken, Date.now() + TOKEN_SECONDS * 1000);
    stats.tokensIssued += 1;
    send(res, 200, { access_token: accessToken, expires_in: TOKEN_SECONDS, token_type: "Bearer" });
  };

  const secretName = (id: string) => `projects/${projectId}/secrets/${id}`;
  const secretJson = (id: string, secret: GcpSecret) => ({
    name: secretName(id),
    replication: { automatic: {} },
    createTime: secret.createdAt.toISOString(),
    ...(secret.labels ? { labels: secret.labels } : {}),
  });

  /** One page of secrets by id; the page token is the last id of the page before. Empty fields are left out, as Google does. */
  const list = (res: ServerResponse, url: URL) => {
    const sizeParam = url.searchParams.get("pageSize") ?? "0";
    const size = Number(sizeParam);
    if (!/^\d+$/.test(sizeParam))
      return googleError(res, 400, `Invalid value at 'page_size' (TYPE_INT32), "${sizeParam}"`);
    const pageToken = url.searchParams.get("pageToken") ?? "";
    const after = Buffer.from(pageToken, "base64url").toString("utf8");
    if (pageToken && (!SECRET_ID.test(after) || Buffer.from(after).toString("base64url") !== pageToken))
      return googleError(res, 400, "Invalid page token.");
    const ids = [...secrets.keys()].sort();
    const rest = ids.filter((id) => !pageToken || id > after);
    const page = rest.slice(0, size === 0 ? MAX_PAGE_SIZE : Math.min(size, MAX_PAGE_SIZE));
    const more = rest.length > page.length;
    send(res, 200, {
      ...(page.length > 0 ? { secrets: page.map((id) => secretJson(id, secrets.get(id)!)) } : {}),
      ...(more ? { nextPageToken: Buffer.from(page.at(-1)!).toString("base64url") } : {}),
      ...(ids.length > 0 ? { totalSize: ids.length } : {}),
    });
  };

  /** `POST …/secrets?secretId=`: a new secret with no versions, after the id, replication and label checks. */
  const create = (res: ServerResponse, url: URL, body: string) => {
    const id = url.searchParams.get("secretId") ?? "";
    if (!SECRET_ID.test(id))
      return googleError(
        res,
        400,
        `The provided Secret ID [${id}] does not match the expected format [[a-zA-Z_0-9-]+]`,
      );
    const input = parseObject(body);
    if (!input) return googleError(res, 400, "Invalid JSON payload received.");
    if (!validReplication(input.replication)) return googleError(res, 400, "Secret.replication must be set.");
    const labels = readLabels(input.labels);
    if (typeof labels === "string") return googleError(res, 400, labels);
    if (secrets.has(id)) return googleError(res, 409, `Secret [${secretName(id)}] already exists.`);
    const secret: GcpSecret = { versions: [], createdAt: new Date(), ...(labels ? { labels } : {}) };
    secrets.set(id, secret);
    send(res, 200, secretJson(id, secret));
  };

  /** `POST …/secrets/{id}:addVersion`: a new enabled version from base64 data (non-empty, ≤ 64 KiB, checksum if given). */
  const addVersion = (res: ServerResponse, id: string, body: string) => {
    const secret = secrets.get(id);
    if (!secret) return googleError(res, 404, `Secret [${secretName(id)}] not found.`);
    const payload = parseObject(body)?.payload;
    const data = isObject(payload) ? payload.data : undefined;
    if (typeof data !== "string" || !BASE64.test(data))
      return googleError(res, 400, "Invalid value at 'payload.data' (TYPE_BYTES), Base64 decoding failed.");
    const bytes = Buffer.from(data, "base64");
    if (bytes.length === 0) return googleError(res, 400, "Secret Payload cannot be empty.");
    if (bytes.length > MAX_PAYLOAD_BYTES) return googleError(res, 400, "Secret Payload cannot be larger than 64KiB.");
    const checksum = isObject(payload) ? payload.dataCrc32c : undefined;
    /** An int64 comes as a JSON string (or, leniently, a number); anything else cannot match. */
    const given = typeof checksum === "string" || typeof checksum === "number" ? String(checksum) : "";
    if (checksum !== undefined && given !== String(crc32c(bytes)))
      return googleError(res, 400, "Checksum of the received payload does not match the provided data_crc32c.");
    secret.versions.push(bytes.toString("utf8"));
    send(res, 200, {
      name: `${secretName(id)}/versions/${secret.versions.length}`,
      createTime: new Date().toISOString(),
      state: "ENABLED",
      replicationStatus: { automatic: {} },
      clientSpecifiedPayloadChecksum: checksum !== undefined,
    });
  };

  /** `GET …/secrets/{id}/versions/{latest|N}:access`: the version's data and its CRC32C. */
  const access = (res: ServerResponse, id: string, version: string) => {
    const secret = secrets.get(id);
    if (!secret || (version === "latest" && secret.versions.length === 0))
      return googleError(res, 404, `Secret [${secretName(id)}] not found or has no versions.`);
    const number = version === "latest" ? secret.versions.length : /^\d+$/.test(version) ? Number(version) : 0;
    const value = secret.versions[number - 1];
    if (value === undefined)
      return googleError(res, 404, `Secret Version [${secretName(id)}/versions/${version}] not found.`);
    const bytes = Buffer.from(value, "utf8");
    send(res, 200, {
      name: `${secretName(id)}/versions/${number}`,
      payload: { data: bytes.toString("base64"), dataCrc32c: String(crc32c(bytes)) },
    });
  };

  /** The operation a Secret Manager request names, with the permission Google checks and on which resource. */
  const operation = (req: IncomingMessage, res: ServerResponse, url: URL, body: string): Operation | undefined => {
    const m = /^\/v1\/projects\/([^/]+)\/secrets(?:\/([^/:]+))?(?::(addVersion)|\/versions\/([^/:]+):access)?$/.exec(
      url.pathname,
    );
    if (!m) return undefined;
    const [project = "", rawId, add, rawVersion] = m.slice(1);
    const id = rawId === undefined ? undefined : decode(rawId);
    const version = rawVersion === undefined ? undefined : decode(rawVersion);
    const parent = `projects/${decode(project)}`;
    const method = req.method ?? "";
    if (id === undefined && add === undefined && version === undefined) {
      if (method === "GET") return { permission: "secrets.list", resource: parent, run: () => list(res, url) };
      if (method === "POST")
        return { permission: "secrets.create", resource: parent, run: () => create(res, url, body) };
      return undefined;
    }
    if (id === undefined) return undefined;
    const resource = `${parent}/secrets/${id}`;
    if (add !== undefined)
      return method === "POST"
        ? { permission: "versions.add", resource, run: () => addVersion(res, id, body) }
        : undefined;
    if (version !== undefined)
      return method === "GET"
        ? {
            permission: "versions.access",
            resource: `${resource}/versions/${version}`,
            run: () => access(res, id, version),
          }
        : undefined;
    const secret = secrets.get(id);
    const missing = () => googleError(res, 404, `Secret [${secretName(id)}] not found.`);
    if (method === "GET")
      return {
        permission: "secrets.get",
        resource,
        run: () => (secret ? send(res, 200, secretJson(id, secret)) : missing()),
      };
    if (method === "DELETE")
      return {
        permission: "secrets.delete",
        resource,
        run: () => (secrets.delete(id) ? send(res, 200, {}) : missing()),
      };
    return undefined;
  };

  /** A Secret Manager request: a live token of ours, then the operation, then our project only. */
  const secretManager = (req: IncomingMessage, res: ServerResponse, url: URL, body: string) => {
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1] ?? "";
    const expiresAt = tokens.get(bearer);
    if (mode === "unauthorized" || expiresAt === undefined || expiresAt <= Date.now())
      return googleError(res, 401, "Request had invalid authentication credentials.");
    const op = operation(req, res, url, body);
    if (!op) return googleError(res, 404, "Method not found.");
    if (!op.resource.startsWith(`projects/${projectId}/`) && op.resource !== `projects/${projectId}`)
      return googleError(
        res,
        403,
        `Permission 'secretmanager.${op.permission}' denied for resource '${op.resource}' (or it may not exist).`,
      );
    op.run();
  };

  const peer = await startPeer(ca, (req, body, res) => {
    const url = new URL(req.url ?? "/", "https://gcp.invalid");
    calls.push({ method: req.method ?? "", path: url.pathname });
    if (url.pathname === "/token") {
      if (mode === "500") return send(res, 500, { error: "internal_failure", error_description: "Backend Error" });
      if (req.method !== "POST")
        return send(res, 405, { error: "invalid_request", error_description: "Only POST is supported." });
      return void token(res, body);
    }
    if (mode === "500") return googleError(res, 500, "Internal error encountered.");
    if (!url.pathname.startsWith("/v1/")) return googleError(res, 404, "Method not found.");
    secretManager(req, res, url, body);
  });
  tokenUrl = `${peer.url}/token`;

  const serviceAccountKey: ServiceAccountKey = {
    type: "service_account",
    project_id: projectId,
    private_key_id: privateKeyId,
    private_key: await exportPKCS8(privateKey),
    client_email: clientEmail,
    client_id: String(100_000_000_000_000_000_000n + BigInt(`0x${randomBytes(8).toString("hex")}`)),
    token_uri: tokenUrl,
  };

  return {
    ...peer,
    projectId,
    serviceAccountKey,
    tokenUrl,
    secrets,
    calls,
    /** The newest value of a secret, or undefined when it is absent or has no versions. */
    latest: (id: string) => secrets.get(id)?.versions.at(-1),
    /** How many access tokens the token endpoint has given out. */
    get tokensIssued() {
      return stats.tokensIssued;
    },
    /** Makes a secret exist as if created earlier, with these values as its versions (oldest first). */
    seed: (id: string, ...values: string[]) => {
      secrets.set(id, { versions: values, createdAt: new Date() });
    },
    /** Forgets every token given out, as if each had expired: callers must ask for a new one. */
    expireTokens: () => tokens.clear(),
    /** Normal answers, HTTP 500 everywhere, or every credential refused (the key revoked). */
    setMode: (next: GcpMode) => {
      mode = next;
    },
  };
};

export type GcpFake = Awaited<ReturnType<typeof startGcpFake>>;
