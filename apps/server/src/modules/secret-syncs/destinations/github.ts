import sodium from "libsodium-wrappers";
import type { AppDeps } from "../../../context";
import { gitHubApiUrl, withGitHub, type GitHubCall } from "../../app-connections/app-clients";
import type { UsableConnection } from "../../app-connections/app-connection.service";
import type { DestinationDriver, FoundSecret } from "./destination";
import { DestinationError } from "./errors";

type Config =
  | { scope: "repository"; owner: string; repo: string }
  | { scope: "repository-environment"; owner: string; repo: string; env: string }
  | {
      scope: "organization";
      org: string;
      visibility: "all" | "private" | "selected";
      selectedRepositoryIds?: number[];
    };

/** GitHub's secret names: letters, digits and underscores, not starting with a digit or GITHUB_. */
const NAME = /^[A-Z_][A-Z0-9_]{0,254}$/;
const PAGE = 100;
/** A whole run against GitHub (every secret is written each time it changes, one request each). */
const RUN_DEADLINE_MS = 300_000;

const scopePath = (config: Config) => {
  const e = encodeURIComponent;
  if (config.scope === "organization") return `orgs/${e(config.org)}/actions/secrets`;
  if (config.scope === "repository") return `repos/${e(config.owner)}/${e(config.repo)}/actions/secrets`;
  return `repos/${e(config.owner)}/${e(config.repo)}/environments/${e(config.env)}/secrets`;
};

/** How many secrets GitHub keeps in one place. */
const limitOf = (config: Config) => (config.scope === "organization" ? 1_000 : 100);

const credsOf = (connection: UsableConnection) => {
  if (connection.app !== "github") throw new Error("not a GitHub connection");
  return connection.credentials;
};

const failure = (operation: string, key: string | undefined, status: number) =>
  new DestinationError(operation, key, `HTTP ${status}`, status !== 404 && status !== 422);

/**
 * The session's calls inside one connected use of the API: the scope's public key is fetched once,
 * and every value is sent as a libsodium sealed box to it.
 */
const session = (call: GitHubCall, config: Config) => {
  const base = scopePath(config);
  let publicKey: Promise<{ key_id: string; key: Uint8Array }> | undefined;
  const keyOf = () =>
    (publicKey ??= call({ path: `${base}/public-key` }).then(async (answer) => {
      if (answer.status !== 200) throw failure("Reading the public key", undefined, answer.status);
      const { key_id, key } = JSON.parse(answer.body) as { key_id: string; key: string };
      await sodium.ready;
      return { key_id, key: sodium.from_base64(key, sodium.base64_variants.ORIGINAL) };
    }));
  return {
    list: async () => {
      const found = new Map<string, FoundSecret>();
      for (let page = 1; ; page += 1) {
        const answer = await call({ path: `${base}?per_page=${PAGE}&page=${page}` });
        if (answer.status !== 200) throw failure("Listing secrets", undefined, answer.status);
        const { secrets } = JSON.parse(answer.body) as { secrets: { name: string }[] };
        for (const s of secrets) found.set(s.name, { name: s.name, value: undefined });
        if (secrets.length < PAGE) return found;
      }
    },
    write: async (name: string, value: string, _exists: boolean) => {
      const { key_id, key } = await keyOf();
      const encrypted_value = sodium.to_base64(
        sodium.crypto_box_seal(sodium.from_string(value), key),
        sodium.base64_variants.ORIGINAL,
      );
      const extra =
        config.scope === "organization"
          ? {
              visibility: config.visibility,
              ...(config.visibility === "selected"
                ? { selected_repository_ids: config.selectedRepositoryIds ?? [] }
                : {}),
            }
          : {};
      const answer = await call({
        method: "PUT",
        path: `${base}/${encodeURIComponent(name)}`,
        body: { encrypted_value, key_id, ...extra },
      });
      if (answer.status !== 201 && answer.status !== 204) throw failure("Writing", name, answer.status);
    },
    remove: async (name: string) => {
      const answer = await call({ method: "DELETE", path: `${base}/${encodeURIComponent(name)}` });
      if (answer.status !== 204 && answer.status !== 404) throw failure("Deleting", name, answer.status);
    },
  };
};

/**
 * GitHub Actions secrets of a repository, a repository's environment or an organization. GitHub
 * never shows a value, so a key is written again only when its value changed since this sync wrote it.
 */
export const gitHub: DestinationDriver = {
  nameOf: (_config, key) => {
    const name = key.toUpperCase();
    return NAME.test(name) && !name.startsWith("GITHUB_") ? name : undefined;
  },
  keyOf: (_config, name) => name,
  writesEmpty: true,
  readsValues: false,
  shape: (raw, values) => {
    if (values.size > limitOf(raw as Config))
      throw new DestinationError(
        "Syncing",
        undefined,
        `GitHub keeps at most ${limitOf(raw as Config)} secrets here (the folder has ${values.size})`,
        false,
      );
    return values;
  },
  refOf: async (_deps, connection, raw) => `github:${gitHubApiUrl(credsOf(connection))}${scopePath(raw as Config)}`,
  use: (deps: AppDeps, connection, raw, _options, work) =>
    withGitHub(deps, credsOf(connection), (call) => work(session(call, raw as Config)), RUN_DEADLINE_MS),
};
