import { createHash, randomBytes, randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { startPeer, type TestCa } from "./workload-peers";

/**
 * Azure Key Vault's secrets data plane as a secret sync's destination, with Microsoft Entra's
 * client-credentials token endpoint for one tenant and one app registration on the same HTTPS
 * server (the vault's base URL is the fake's URL). As Azure does, Entra gives a token only for the
 * app's own secret and the vault's scope; the vault wants its API version and a token Entra gave,
 * treats names case-insensitively, soft-deletes (a deleted name cannot be reused until it is
 * recovered or purged) and pages its listings through `nextLink`.
 */

export type AzureSecret = {
  versions: string[];
  enabled: boolean;
  deletedAt?: Date;
  createdAt?: Date;
  updatedAt?: Date;
  contentType?: string;
  tags?: Record<string, string>;
};
export type AzureMode = "ok" | "500" | "unauthorized";
export type AzureCall = { method: string; path: string };
export type AzureFakeOptions = { tenantId: string; clientId: string; clientSecret: string };

const API_VERSION = "7.3";
const VAULT_RESOURCE = "https://vault.azure.net";
const VAULT_SCOPE = `${VAULT_RESOURCE}/.default`;
const SECRET_NAME = /^[0-9a-zA-Z-]{1,127}$/;
const PAGE_SIZE = 25;
const TOKEN_SECONDS = 3599;
const MAX_VALUE_BYTES = 25 * 1024;
const MAX_TAGS = 15;
const RECOVERABLE_DAYS = 90;
const SECRET_VALUE_HINT =
  "Ensure the secret being sent in the request is the client secret value, not the client secret ID, for a secret added to app";
const DELETED_BUT_RECOVERABLE =
  "is currently in a deleted but recoverable state, and its name cannot be reused; in this state, the secret can only be recovered or purged.";
const RECOVER_HINT =
  "If you recently deleted this secret you may be able to recover it using the correct recovery command.";
type EntraRefusal = [status: number, error: string, code: number, description: string];

/** Answers with JSON, or with no body when `body` is undefined. */
const send = (res: ServerResponse, status: number, body?: unknown, headers: Record<string, string> = {}) => {
  if (body === undefined) {
    res.writeHead(status, headers);
    return res.end();
  }
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers });
  res.end(JSON.stringify(body));
};

/** A Key Vault error: `{error: {code, message, innererror?}}`. */
const vaultError = (res: ServerResponse, status: number, code: string, message: string, inner?: string) =>
  send(res, status, { error: { code, message, ...(inner ? { innererror: { code: inner } } : {}) } });

/** An Entra token-endpoint error: the OAuth error, an AADSTS-coded description and the trace fields Entra adds. */
const entraError = (res: ServerResponse, status: number, error: string, code: number, description: string) => {
  const traceId = randomUUID();
  const correlationId = randomUUID();
  const timestamp = new Date()
    .toISOString()
    .replace("T", " ")
    .replace(/\.\d+Z$/, "Z");
  send(res, status, {
    error,
    error_description: `AADSTS${code}: ${description} Trace ID: ${traceId} Correlation ID: ${correlationId} Timestamp: ${timestamp}`,
    error_codes: [code],
    timestamp,
    trace_id: traceId,
    correlation_id: correlationId,
  });
};

/** A JSON object from a request body, or undefined when the body is not one. */
const parseObject = (body: string): Record<string, unknown> | undefined => {
  try {
    const parsed = JSON.parse(body) as unknown;
    return parsed && typeof parsed === "object" && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
};

/** A percent-encoded string decoded, or as it came when it is not valid percent-encoding. */
const decode = (text: string) => {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
};

/** Client credentials sent as HTTP Basic (`client_secret_basic`), which Entra takes as well as form fields. */
const basicCredentials = (req: IncomingMessage) => {
  const encoded = /^Basic (.+)$/i.exec(req.headers.authorization ?? "")?.[1];
  if (!encoded) return undefined;
  const [id = "", secret = ""] = Buffer.from(encoded, "base64").toString("utf8").split(":");
  return { id: decode(id), secret: decode(secret) };
};

/** A PUT's tags when valid (at most 15, string values), an error message when not, undefined when absent. */
const readTags = (tags: unknown): Record<string, string> | string | undefined => {
  if (tags === undefined) return undefined;
  if (typeof tags !== "object" || tags === null || Array.isArray(tags)) return "Tags must be an object.";
  const entries = Object.entries(tags);
  if (entries.length > MAX_TAGS) return `The number of tags exceeds the maximum of ${MAX_TAGS}.`;
  if (!entries.every(([, v]) => typeof v === "string")) return "Tag values must be strings.";
  return Object.fromEntries(entries as [string, string][]);
};

/** Starts the fake for one tenant and app registration. */
export const startAzureFake = async (ca: TestCa, options: AzureFakeOptions) => {
  const secrets = new Map<string, AzureSecret>();
  const tokens = new Map<string, number>();
  const calls: AzureCall[] = [];
  const stats = { tokensIssued: 0 };
  const started = new Date();
  const salt = randomBytes(8).toString("hex");
  let mode: AzureMode = "ok";
  let base = "";

  /** The stored name a name addresses: Key Vault names are case-insensitive. */
  const keyOf = (name: string) => [...secrets.keys()].find((k) => k.toLowerCase() === name.toLowerCase());
  /** A version's 32-hex-digit id, stable for the name and position so that seeded secrets have ids too. */
  const versionId = (key: string, index: number) =>
    createHash("sha256").update(`${salt}/${key.toLowerCase()}/${index}`).digest("hex").slice(0, 32);
  const epoch = (date: Date | undefined) => Math.floor((date ?? started).getTime() / 1000);
  const attributes = (s: AzureSecret) => ({
    enabled: s.enabled,
    created: epoch(s.createdAt),
    updated: epoch(s.updatedAt ?? s.createdAt),
    recoveryLevel: "Recoverable+Purgeable",
    recoverableDays: RECOVERABLE_DAYS,
  });
  const extras = (s: AzureSecret) => ({
    ...(s.contentType === undefined ? {} : { contentType: s.contentType }),
    ...(s.tags === undefined ? {} : { tags: s.tags }),
  });
  /** A secret bundle of one version, with its value only where Key Vault gives it (get and set). */
  const bundle = (key: string, s: AzureSecret, index: number, withValue: boolean) => ({
    ...(withValue ? { value: s.versions[index] } : {}),
    id: `${base}/secrets/${key}/${versionId(key, index)}`,
    attributes: attributes(s),
    ...extras(s),
  });
  const deletedBundle = (key: string, s: AzureSecret) => ({
    recoveryId: `${base}/deletedsecrets/${key}`,
    deletedDate: epoch(s.deletedAt),
    scheduledPurgeDate: epoch(s.deletedAt) + RECOVERABLE_DAYS * 86_400,
    ...bundle(key, s, s.versions.length - 1, false),
  });
  const notFound = (res: ServerResponse, name: string) =>
    vaultError(
      res,
      404,
      "SecretNotFound",
      `A secret with (name/id) ${name} was not found in this key vault. ${RECOVER_HINT}`,
    );
  const deletedNotFound = (res: ServerResponse, name: string) =>
    vaultError(res, 404, "SecretNotFound", `Deleted Secret not found: ${name}`);
  /** The stored name and secret of a live (not deleted, with a version) secret. */
  const live = (name: string) => {
    const key = keyOf(name);
    const s = key === undefined ? undefined : secrets.get(key);
    return key !== undefined && s && !s.deletedAt && s.versions.length > 0 ? { key, s } : undefined;
  };
  const deleted = (name: string) => {
    const key = keyOf(name);
    const s = key === undefined ? undefined : secrets.get(key);
    return key !== undefined && s?.deletedAt ? { key, s } : undefined;
  };

  /** Why Entra refuses a token request (status, OAuth error, AADSTS code, description), checked in Entra's order. */
  const refusal = (req: IncomingMessage, tenant: string, form: URLSearchParams): EntraRefusal | undefined => {
    const basic = basicCredentials(req);
    const clientId = form.get("client_id") ?? basic?.id;
    const clientSecret = form.get("client_secret") ?? basic?.secret;
    const scope = form.get("scope");
    const missing = (name: string) => `The request body must contain the following parameter: '${name}'.`;
    if (mode === "500") return [500, "server_error", 50000, "There was an error issuing a token."];
    if (req.method !== "POST") return [400, "invalid_request", 900561, "The endpoint only accepts POST requests."];
    if (tenant.toLowerCase() !== options.tenantId.toLowerCase())
      return [400, "invalid_request", 90002, `Tenant '${tenant}' not found.`];
    if (form.get("grant_type") !== "client_credentials")
      return [400, "unsupported_grant_type", 70003, "The app requested an unsupported grant type."];
    if (!clientId) return [400, "invalid_request", 900144, missing("client_id")];
    if (clientId !== options.clientId)
      return [400, "unauthorized_client", 700016, `Application with identifier '${clientId}' was not found.`];
    if (!clientSecret) return [401, "invalid_client", 7000218, missing("client_assertion' or 'client_secret")];
    if (mode === "unauthorized")
      return [401, "invalid_client", 7000222, `The provided client secret keys for app '${clientId}' are expired.`];
    if (clientSecret !== options.clientSecret)
      return [401, "invalid_client", 7000215, `Invalid client secret provided. ${SECRET_VALUE_HINT} '${clientId}'.`];
    if (!scope) return [400, "invalid_request", 900144, missing("scope")];
    if (scope !== VAULT_SCOPE) return [400, "invalid_scope", 70011, `The scope ${scope} is not valid.`];
    return undefined;
  };

  /** `POST /{tenant}/oauth2/v2.0/token`: client credentials for the vault's scope exchanged for a new token. */
  const token = (req: IncomingMessage, res: ServerResponse, tenant: string, body: string) => {
    const refused = refusal(req, tenant, new URLSearchParams(body));
    if (refused) return entraError(res, ...refused);
    const accessToken = randomBytes(48).toString("base64url");
    tokens.set(accessToken, Date.now() + TOKEN_SECONDS * 1000);
    stats.tokensIssued += 1;
    const expiry = { expires_in: TOKEN_SECONDS, ext_expires_in: TOKEN_SECONDS };
    send(res, 200, { token_type: "Bearer", ...expiry, access_token: accessToken });
  };

  /** One page of a listing, by lower-cased name; `$skiptoken` is the last name of the page before. */
  const page = (res: ServerResponse, url: URL, keys: string[], item: (key: string) => unknown) => {
    const maxParam = url.searchParams.get("maxresults");
    const max = maxParam === null ? PAGE_SIZE : Number(maxParam);
    if (!Number.isInteger(max) || max < 1 || max > PAGE_SIZE)
      return vaultError(res, 400, "BadParameter", `Invalid maxresults: ${maxParam}. It must be 1 to ${PAGE_SIZE}.`);
    const skip = url.searchParams.get("$skiptoken");
    const after = skip === null ? "" : Buffer.from(skip, "base64url").toString("utf8");
    if (skip !== null && (!SECRET_NAME.test(after) || Buffer.from(after).toString("base64url") !== skip))
      return vaultError(res, 400, "BadParameter", "The skip token is not valid.");
    const rest = keys
      .map((key) => ({ key, lower: key.toLowerCase() }))
      .sort((a, b) => (a.lower < b.lower ? -1 : 1))
      .filter(({ lower }) => lower > after);
    const items = rest.slice(0, max);
    const next = Buffer.from(items.at(-1)?.lower ?? "").toString("base64url");
    const nextLink =
      rest.length > max
        ? `${base}${url.pathname}?api-version=${API_VERSION}&$skiptoken=${next}${maxParam === null ? "" : `&maxresults=${max}`}`
        : null;
    send(res, 200, { value: items.map(({ key }) => item(key)), nextLink });
  };

  /** `PUT /secrets/{name}`: a new version (the secret made on first use), refused while the name is soft-deleted. */
  const put = (res: ServerResponse, name: string, body: string) => {
    const input = parseObject(body);
    if (!input || typeof input.value !== "string")
      return vaultError(res, 400, "BadParameter", "Property 'value' is required and must be a string.");
    if (Buffer.byteLength(input.value) > MAX_VALUE_BYTES)
      return vaultError(res, 400, "BadParameter", "The secret value exceeds the maximum size of 25 KB.");
    const tags = readTags(input.tags);
    if (typeof tags === "string") return vaultError(res, 400, "BadParameter", tags);
    const given = input.attributes as { enabled?: unknown } | undefined;
    const enabled = typeof given?.enabled === "boolean" ? given.enabled : true;
    const key = keyOf(name) ?? name;
    const existing = secrets.get(key);
    if (existing?.deletedAt)
      return vaultError(
        res,
        409,
        "Conflict",
        `Secret ${name} ${DELETED_BUT_RECOVERABLE}`,
        "ObjectIsDeletedButRecoverable",
      );
    const now = new Date();
    const s: AzureSecret = existing ?? { versions: [], enabled, createdAt: now };
    s.versions.push(input.value);
    s.enabled = enabled;
    s.updatedAt = now;
    if (typeof input.contentType === "string") s.contentType = input.contentType;
    if (tags) s.tags = tags;
    secrets.set(key, s);
    send(res, 200, bundle(key, s, s.versions.length - 1, true));
  };

  /** `GET /secrets/{name}[/{version}]`: the version's bundle with its value; refused for a disabled secret. */
  const get = (res: ServerResponse, name: string, version: string | undefined) => {
    const found = live(name);
    if (!found) return notFound(res, name);
    const { key, s } = found;
    const index = version ? s.versions.findIndex((_, i) => versionId(key, i) === version) : s.versions.length - 1;
    if (index < 0) return notFound(res, `${name}/${version}`);
    if (!s.enabled)
      return vaultError(res, 403, "Forbidden", "Operation get is not allowed on a disabled secret.", "SecretDisabled");
    send(res, 200, bundle(key, s, index, true));
  };

  /** A listing's entry for a live secret: its unversioned id, attributes, content type and tags (never a value). */
  const listItem = (key: string) => ({
    id: `${base}/secrets/${key}`,
    ...extras(secrets.get(key)!),
    attributes: attributes(secrets.get(key)!),
  });
  /** A listing's entry for a deleted secret: as its deleted bundle, with the unversioned id. */
  const deletedItem = (key: string) => ({ ...deletedBundle(key, secrets.get(key)!), id: `${base}/secrets/${key}` });

  /** The routes of `/secrets…` and `/deletedsecrets…`, by collection, name, last segment and method. */
  const route = (req: IncomingMessage, res: ServerResponse, url: URL, body: string) => {
    const m = /^\/(secrets|deletedsecrets)(?:\/([^/]+)(?:\/([^/]*))?)?\/?$/.exec(url.pathname);
    if (!m) return vaultError(res, 404, "NotFound", `The requested resource ${url.pathname} was not found.`);
    const [collection, name, last] = m.slice(1);
    const method = req.method ?? "";
    if (name !== undefined && !SECRET_NAME.test(name))
      return vaultError(res, 400, "BadParameter", `The request URI contains an invalid name: ${name}`);
    if (name === undefined && method === "GET") {
      const listed =
        collection === "secrets" ? [...secrets].filter(([k]) => live(k)) : [...secrets].filter(([k]) => deleted(k));
      return page(
        res,
        url,
        listed.map(([k]) => k),
        collection === "secrets" ? listItem : deletedItem,
      );
    }
    if (name === undefined) return vaultError(res, 405, "MethodNotAllowed", `${method} is not allowed here.`);
    if (collection === "secrets" && method === "GET") return get(res, name, last || undefined);
    if (collection === "secrets" && method === "PUT" && last === undefined) return put(res, name, body);
    if (collection === "secrets" && method === "DELETE" && !last) {
      const found = live(name);
      if (!found) return notFound(res, name);
      found.s.deletedAt = new Date();
      return send(res, 200, deletedBundle(found.key, found.s));
    }
    const gone = deleted(name);
    if (collection === "deletedsecrets" && last === "recover" && method === "POST") {
      if (!gone) return deletedNotFound(res, name);
      delete gone.s.deletedAt;
      return send(res, 200, bundle(gone.key, gone.s, gone.s.versions.length - 1, false));
    }
    if (collection === "deletedsecrets" && last === undefined && (method === "GET" || method === "DELETE")) {
      if (!gone) return deletedNotFound(res, name);
      if (method === "GET") return send(res, 200, deletedBundle(gone.key, gone.s));
      secrets.delete(gone.key);
      return send(res, 204);
    }
    vaultError(res, 405, "MethodNotAllowed", `${method} is not allowed here.`);
  };

  /** A data-plane request: the API version, then a live token of ours (with the challenge header clients follow). */
  const vault = (req: IncomingMessage, res: ServerResponse, url: URL, body: string) => {
    if (mode === "500") return vaultError(res, 500, "InternalServerError", "An unexpected error occurred.");
    const version = url.searchParams.get("api-version");
    if (version !== API_VERSION)
      return vaultError(
        res,
        400,
        "BadParameter",
        version === null
          ? "The 'api-version' query parameter is missing."
          : `The specified version (${version}) is not recognized. Consider using the latest supported version (${API_VERSION}).`,
      );
    const challenge = `Bearer authorization="${base}/${options.tenantId}", resource="${VAULT_RESOURCE}"`;
    const unauthorized = (message: string) =>
      send(res, 401, { error: { code: "Unauthorized", message } }, { "www-authenticate": challenge });
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    if (!bearer) return unauthorized("AKV10000: Request is missing a Bearer or PoP token.");
    const expiresAt = tokens.get(bearer);
    if (mode === "unauthorized" || expiresAt === undefined || expiresAt <= Date.now())
      return unauthorized("The access token is not valid or has expired.");
    route(req, res, url, body);
  };

  const peer = await startPeer(ca, (req, body, res) => {
    const url = new URL(req.url ?? "/", "https://vault.invalid");
    calls.push({ method: req.method ?? "", path: url.pathname });
    const tenant = /^\/([^/]+)\/oauth2\/v2\.0\/token$/.exec(url.pathname)?.[1];
    if (tenant !== undefined) return token(req, res, decode(tenant), body);
    vault(req, res, url, body);
  });
  base = peer.url;

  return {
    ...peer,
    /** The token endpoint's URL, as an Entra authority would give it for the tenant. */
    tokenUrl: `${peer.url}/${options.tenantId}/oauth2/v2.0/token`,
    secrets,
    calls,
    /** The newest value of a secret (by case-insensitive name), deleted or not; undefined when absent. */
    latest: (name: string) => {
      const key = keyOf(name);
      return key === undefined ? undefined : secrets.get(key)?.versions.at(-1);
    },
    /** How many access tokens the token endpoint has given out. */
    get tokensIssued() {
      return stats.tokensIssued;
    },
    /** Sets a value as if put earlier: a new version of the secret, made enabled and live when absent. */
    seed: (name: string, value: string) => {
      const key = keyOf(name) ?? name;
      const s = secrets.get(key) ?? { versions: [], enabled: true, createdAt: new Date() };
      s.versions.push(value);
      secrets.set(key, s);
    },
    /** Forgets every token given out, as if each had expired: callers must ask for a new one. */
    expireTokens: () => tokens.clear(),
    /** Normal answers, HTTP 500 everywhere, or every credential refused (the client secret expired). */
    setMode: (next: AzureMode) => {
      mode = next;
    },
  };
};

export type AzureFake = Awaited<ReturnType<typeof startAzureFake>>;
