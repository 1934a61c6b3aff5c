import type { AppDeps } from "../../../context";
import { azureAccessToken } from "../../app-connections/cloud-tokens";
import type { UsableConnection } from "../../app-connections/app-connection.service";
import { apiFailure, withBearerApi, type ApiCall } from "./bearer-api";
import type { DestinationDriver, DestinationSession, FoundSecret } from "./destination";
import { DestinationError } from "./errors";

type Config = { vaultBaseUrl: string };

const API = "api-version=7.3";
/** Key Vault names: letters, digits and hyphens (a folder key's underscores become hyphens). */
const NAME = /^[0-9a-zA-Z-]{1,127}$/;

const credsOf = (connection: UsableConnection) => {
  if (connection.app !== "azure-key-vault") throw new Error("not an Azure Key Vault connection");
  return connection.credentials;
};

/** The path and query of a `nextLink`, which must stay on the vault's own origin. */
const nextPath = (vault: URL, link: unknown) => {
  if (typeof link !== "string" || link === "") return undefined;
  const next = new URL(link);
  if (next.origin !== vault.origin)
    throw new DestinationError("Listing secrets", undefined, "a page link left the vault");
  return `${next.pathname.replace(/^\//, "")}${next.search}`;
};

const session = (call: ApiCall, vault: URL): DestinationSession => {
  const put = (name: string, value: string) => call({ method: "PUT", path: `secrets/${name}?${API}`, body: { value } });
  return {
    list: async (valueOf) => {
      const found = new Map<string, FoundSecret>();
      let path: string | undefined = `secrets?${API}`;
      while (path) {
        const answer = await call({ path });
        if (answer.status !== 200) throw apiFailure("Listing secrets", undefined, answer);
        const page = answer.json() as {
          value?: { id?: string; attributes?: { enabled?: boolean } }[];
          nextLink?: unknown;
        };
        for (const item of page.value ?? []) {
          const name = item.id?.split("/").pop();
          // A disabled secret is left alone: it is neither read nor counted as present.
          if (!name || item.attributes?.enabled === false) continue;
          if (!valueOf(name)) {
            found.set(name, { name, value: undefined });
            continue;
          }
          const read = await call({ path: `secrets/${name}?${API}` });
          if (read.status !== 200) throw apiFailure("Reading", name, read);
          const value = read.json().value;
          found.set(name, { name, value: typeof value === "string" ? value : undefined });
        }
        path = nextPath(vault, page.nextLink);
      }
      return found;
    },
    write: async (name, value) => {
      let answer = await put(name, value);
      const inner = (answer.json().error as { innererror?: { code?: string } } | undefined)?.innererror?.code;
      if (answer.status === 409 && inner === "ObjectIsDeletedButRecoverable") {
        // Deleted by this sync before and kept recoverable: recovered, then given the value.
        const recovered = await call({ method: "POST", path: `deletedsecrets/${name}/recover?${API}` });
        if (recovered.status !== 200) throw apiFailure("Recovering", name, recovered);
        answer = await put(name, value);
      }
      if (answer.status !== 200) throw apiFailure("Writing", name, answer);
    },
    remove: async (name) => {
      const answer = await call({ method: "DELETE", path: `secrets/${name}?${API}` });
      if (answer.status !== 200 && answer.status !== 404) throw apiFailure("Deleting", name, answer);
    },
  };
};

/** Azure Key Vault: one secret per key; deletes are Key Vault's soft deletes, recovered if written again. */
export const azureKeyVault: DestinationDriver = {
  nameOf: (_config, key) => {
    const name = key.replace(/_/g, "-");
    return NAME.test(name) ? name : undefined;
  },
  keyOf: (_config, name) => name.replace(/-/g, "_"),
  writesEmpty: false,
  readsValues: true,
  shape: (_config, values) => values,
  refOf: async (_deps, _connection, raw) => `azure:${new URL((raw as Config).vaultBaseUrl).origin}`,
  use: async (deps: AppDeps, connection, raw, _options, work) => {
    const vault = new URL((raw as Config).vaultBaseUrl);
    const token = await azureAccessToken(deps, credsOf(connection));
    return withBearerApi(deps, `${vault.origin}/`, token, (call) => work(session(call, vault)));
  },
};
