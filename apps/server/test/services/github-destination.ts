import { randomInt } from "node:crypto";
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import sodium from "libsodium-wrappers";
import { startPeer, type TestCa } from "./workload-peers";

/**
 * GitHub Enterprise Server's REST API (under `/api/v3`) as a secret sync's destination: Actions
 * secrets of repositories, their environments and organizations. As GitHub does, it wants a token
 * and a User-Agent, gives each scope its own sealing key, and takes a value only when it is a sealed
 * box it can open with the key the request names; the opened values are kept for the test to read.
 */

export type GitHubSecret = {
  value: string;
  createdAt: Date;
  updatedAt: Date;
  visibility?: string;
  selectedRepositoryIds?: number[];
};
export type GitHubMode = "ok" | "500" | "unauthorized";
export type GitHubFakeOptions = {
  token: string;
  login?: string;
  repositories: { owner: string; repo: string; environments?: string[] }[];
  orgs?: string[];
};
export type GitHubRequest = { method: string; path: string; headers: IncomingHttpHeaders };
type KeyPair = { keyId: string; publicKey: Uint8Array; privateKey: Uint8Array };

const DOCS = "https://docs.github.com/enterprise-server@3.14/rest";
const NOT_FOUND = { message: "Not Found", documentation_url: DOCS };
const MAX_VALUE_BYTES = 48 * 1024;

/** A repository's scope key (names are case-insensitive on GitHub, so scopes are kept in lower case). */
export const repoScope = (owner: string, repo: string) => `repos/${owner}/${repo}`.toLowerCase();
/** An environment's scope key. */
export const envScope = (owner: string, repo: string, env: string) =>
  `${repoScope(owner, repo)}/environments/${env.toLowerCase()}`;
/** An organization's scope key. */
export const orgScope = (org: string) => `orgs/${org}`.toLowerCase();

/**
 * The scope a secrets path addresses and the rest of it: `repos/{o}/{r}/actions/secrets…`,
 * `repos/{o}/{r}/environments/{env}/secrets…` (no `actions`, as GitHub names it) or `orgs/{org}/actions/secrets…`.
 */
const parseSecretsPath = (pathname: string) => {
  const m =
    /^\/api\/v3\/(?:(repos\/[^/]+\/[^/]+)\/actions|(repos\/[^/]+\/[^/]+\/environments\/[^/]+)|(orgs\/[^/]+)\/actions)\/secrets(?:\/([^/]+))?$/.exec(
      pathname,
    );
  if (!m) return undefined;
  const scope = decodeURIComponent(m[1] ?? m[2] ?? m[3] ?? "").toLowerCase();
  return { scope, isOrg: m[3] !== undefined, rest: m[4] === undefined ? undefined : decodeURIComponent(m[4]) };
};

/** A time as GitHub writes it: ISO 8601 to the second. */
const ghTime = (date: Date) => date.toISOString().replace(/\.\d{3}Z$/, "Z");

/** A new X25519 key pair with a GitHub-like numeric key id. */
const newKeyPair = (): KeyPair => {
  const { publicKey, privateKey } = sodium.crypto_box_keypair();
  return { keyId: `${Date.now()}${randomInt(100_000, 999_999)}`, publicKey, privateKey };
};

/** Answers with JSON, or with no body at all when `body` is undefined (204). */
const send = (res: ServerResponse, status: number, body?: unknown, headers: Record<string, string> = {}) => {
  if (body === undefined) {
    res.writeHead(status, headers);
    return res.end();
  }
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers });
  res.end(JSON.stringify(body));
};

/** The `Link` header of one page of a listing: prev / next / last / first, as GitHub sends them. */
const linkHeader = (base: string, perPage: number, page: number, pages: number) => {
  const at = (p: number) => `<${base}?per_page=${perPage}&page=${p}>`;
  const links = [
    page > 1 ? `${at(page - 1)}; rel="prev"` : "",
    page < pages ? `${at(page + 1)}; rel="next"` : "",
    page < pages ? `${at(pages)}; rel="last"` : "",
    page > 1 ? `${at(1)}; rel="first"` : "",
  ];
  return links.filter(Boolean).join(", ");
};

/** Opens a sealed box given as base64, or undefined when it is not one sealed to `pair`. */
const openSealed = (encrypted: string, pair: KeyPair) => {
  try {
    const box = sodium.from_base64(encrypted, sodium.base64_variants.ORIGINAL);
    return sodium.crypto_box_seal_open(box, pair.publicKey, pair.privateKey, "text");
  } catch {
    return undefined;
  }
};

/** Starts the fake with the repositories (and their environments) and organizations it knows. */
export const startGitHubFake = async (ca: TestCa, options: GitHubFakeOptions) => {
  await sodium.ready;
  const stores = new Map<string, Map<string, GitHubSecret>>();
  const repositoryIds = new Map<string, number>();
  options.repositories.forEach(({ owner, repo, environments = [] }, index) => {
    stores.set(repoScope(owner, repo), new Map());
    repositoryIds.set(repoScope(owner, repo), 1000 + index);
    for (const env of environments) stores.set(envScope(owner, repo, env), new Map());
  });
  for (const org of options.orgs ?? []) stores.set(orgScope(org), new Map());
  const keys = new Map<string, KeyPair>();
  const puts: { path: string; scope: string; name: string }[] = [];
  const log: GitHubRequest[] = [];
  let mode: GitHubMode = "ok";

  /** A scope's current key pair, made on first use. */
  const keyOf = (scope: string) => {
    const existing = keys.get(scope);
    if (existing) return existing;
    const pair = newKeyPair();
    keys.set(scope, pair);
    return pair;
  };

  /** The secrets of a scope (by scope key, as `repoScope` and friends make it). */
  const secrets = (scope: string) => {
    const store = stores.get(scope.toLowerCase());
    if (!store) throw new Error(`The GitHub fake has no scope ${scope}`);
    return store;
  };

  /** One page of a scope's secrets, by name, with the Link header when there is more than one. */
  const list = (res: ServerResponse, url: URL, host: string, store: Map<string, GitHubSecret>) => {
    const perPage = Math.min(Math.max(Number(url.searchParams.get("per_page")) || 30, 1), 100);
    const page = Math.max(Number(url.searchParams.get("page")) || 1, 1);
    const names = [...store.keys()].sort();
    const pages = Math.max(Math.ceil(names.length / perPage), 1);
    const entries = names.slice((page - 1) * perPage, page * perPage).map((name) => {
      const s = store.get(name)!;
      return { name, created_at: ghTime(s.createdAt), updated_at: ghTime(s.updatedAt), visibility: s.visibility };
    });
    const link = pages > 1 ? linkHeader(`https://${host}${url.pathname}`, perPage, page, pages) : "";
    send(res, 200, { total_count: names.length, secrets: entries }, link ? { link } : {});
  };

  /** Creates (201) or updates (204) a secret from a sealed value, after GitHub's checks. */
  const put = (
    res: ServerResponse,
    path: string,
    body: string,
    target: { scope: string; isOrg: boolean; name: string },
  ) => {
    let input: Record<string, unknown>;
    try {
      input = JSON.parse(body) as Record<string, unknown>;
    } catch {
      return send(res, 400, { message: "Problems parsing JSON", documentation_url: DOCS });
    }
    const invalid = (message: string) => send(res, 422, { message, documentation_url: DOCS });
    const name = target.name.toUpperCase();
    if (!/^[A-Z_][A-Z0-9_]*$/.test(name) || name.startsWith("GITHUB_"))
      return invalid(
        "Secret names can only contain alphanumeric characters or underscores, must not start with a number or GITHUB_.",
      );
    if (typeof input.encrypted_value !== "string" || typeof input.key_id !== "string")
      return invalid('Invalid request.\n\n"encrypted_value" and "key_id" are required.');
    const pair = keyOf(target.scope);
    if (input.key_id !== pair.keyId) return invalid("Bad request - key_id does not match the current public key.");
    const value = openSealed(input.encrypted_value, pair);
    if (value === undefined) return invalid("Bad request - encrypted_value could not be decrypted with the key.");
    if (Buffer.byteLength(value) > MAX_VALUE_BYTES) return invalid("Secret value exceeds the maximum size of 48 KB.");
    const visibility = input.visibility;
    if (target.isOrg && (typeof visibility !== "string" || !["all", "private", "selected"].includes(visibility)))
      return invalid('Invalid request.\n\n"visibility" must be one of all, private, selected.');
    const ids = input.selected_repository_ids;
    if (ids !== undefined && (!Array.isArray(ids) || !ids.every((id) => Number.isInteger(id))))
      return invalid('Invalid request.\n\n"selected_repository_ids" must be a list of integers.');
    const store = secrets(target.scope);
    const existing = store.get(name);
    const now = new Date();
    store.set(name, {
      value,
      createdAt: existing?.createdAt ?? now,
      updatedAt: now,
      visibility: target.isOrg ? (visibility as string) : undefined,
      selectedRepositoryIds: target.isOrg ? (ids as number[] | undefined) : undefined,
    });
    puts.push({ path, scope: target.scope, name });
    return existing ? send(res, 204) : send(res, 201, {});
  };

  /** The Actions-secrets routes of one scope. */
  const scoped = (req: IncomingMessage, res: ServerResponse, url: URL, body: string) => {
    const parsed = parseSecretsPath(url.pathname);
    const store = parsed && stores.get(parsed.scope);
    if (!parsed || !store) return send(res, 404, NOT_FOUND);
    const { scope, rest } = parsed;
    if (req.method === "GET" && rest === undefined) return list(res, url, String(req.headers.host), store);
    if (req.method === "GET" && rest === "public-key") {
      const pair = keyOf(scope);
      return send(res, 200, {
        key_id: pair.keyId,
        key: sodium.to_base64(pair.publicKey, sodium.base64_variants.ORIGINAL),
      });
    }
    if (rest === undefined || rest === "public-key") return send(res, 404, NOT_FOUND);
    const name = rest.toUpperCase();
    if (req.method === "PUT") return put(res, url.pathname, body, { scope, isOrg: parsed.isOrg, name });
    const found = store.get(name);
    if (req.method === "GET" && found)
      return send(res, 200, { name, created_at: ghTime(found.createdAt), updated_at: ghTime(found.updatedAt) });
    if (req.method === "DELETE" && found) {
      store.delete(name);
      return send(res, 204);
    }
    send(res, 404, NOT_FOUND);
  };

  const peer = await startPeer(ca, (req, body, res) => {
    const url = new URL(req.url ?? "/", "https://github.invalid");
    log.push({ method: req.method ?? "", path: url.pathname, headers: req.headers });
    if (!req.headers["user-agent"])
      return send(res, 403, {
        message:
          "Request forbidden by administrative rules. Please make sure your request has a User-Agent header (https://docs.github.com/en/rest/overview/resources-in-the-rest-api#user-agent-required).",
      });
    if (mode === "500") return send(res, 500, { message: "Server Error" });
    const token = /^(?:Bearer|token) (.+)$/i.exec(req.headers.authorization ?? "")?.[1];
    if (!token) return send(res, 401, { message: "Requires authentication", documentation_url: DOCS });
    if (mode === "unauthorized" || token !== options.token)
      return send(res, 401, { message: "Bad credentials", documentation_url: DOCS });
    if (req.method === "GET" && url.pathname === "/api/v3/user")
      return send(res, 200, { login: options.login ?? "keyward-sync", id: 1, type: "User" });
    const repo = /^\/api\/v3\/repos\/([^/]+)\/([^/]+)$/.exec(url.pathname);
    if (req.method === "GET" && repo) {
      const [owner = "", name = ""] = repo.slice(1).map(decodeURIComponent);
      const id = repositoryIds.get(repoScope(owner, name));
      return id === undefined
        ? send(res, 404, NOT_FOUND)
        : send(res, 200, { id, name, full_name: `${owner}/${name}`, owner: { login: owner }, private: true });
    }
    scoped(req, res, url, body);
  });

  return {
    ...peer,
    secrets,
    repoSecrets: (owner: string, repo: string) => secrets(repoScope(owner, repo)),
    envSecrets: (owner: string, repo: string, env: string) => secrets(envScope(owner, repo, env)),
    orgSecrets: (org: string) => secrets(orgScope(org)),
    /** Puts a secret in place as if set earlier (`at` sets both of its times). */
    seed: (scope: string, name: string, value: string, at = new Date()) => {
      secrets(scope).set(name.toUpperCase(), { value, createdAt: at, updatedAt: at });
    },
    /** A scope's current public key, as `GET …/secrets/public-key` gives it. */
    publicKey: (scope: string) => {
      const pair = keyOf(scope.toLowerCase());
      return { keyId: pair.keyId, key: sodium.to_base64(pair.publicKey, sodium.base64_variants.ORIGINAL) };
    },
    /** New key pairs (and key ids) for one scope, or for every scope: values sealed before are refused. */
    rotateKey: (scope?: string) => {
      for (const s of scope === undefined ? [...stores.keys()] : [scope.toLowerCase()]) keys.set(s, newKeyPair());
    },
    /** The repository id GitHub would give, for `selected_repository_ids`. */
    repositoryId: (owner: string, repo: string) => repositoryIds.get(repoScope(owner, repo)),
    puts,
    log,
    setMode: (next: GitHubMode) => {
      mode = next;
    },
  };
};

export type GitHubFake = Awaited<ReturnType<typeof startGitHubFake>>;
