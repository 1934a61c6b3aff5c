import type { AppDeps } from "../../../context";
import { gcpAccessToken } from "../../app-connections/cloud-tokens";
import type { UsableConnection } from "../../app-connections/app-connection.service";
import { apiFailure, withBearerApi, type ApiCall } from "./bearer-api";
import type { DestinationDriver, DestinationSession, FoundSecret } from "./destination";
import { DestinationConflict } from "./errors";

type Config = { scope: "global"; projectId: string };

const NAME = /^[a-zA-Z0-9_-]{1,255}$/;
const PAGE = 100;

const credsOf = (connection: UsableConnection) => {
  if (connection.app !== "gcp") throw new Error("not a GCP connection");
  return connection.credentials;
};

const fromBase64 = (data: unknown) => (typeof data === "string" ? Buffer.from(data, "base64").toString("utf8") : "");

/** A session on one project's secrets: listed with their latest values, written as new versions. */
const session = (call: ApiCall, config: Config): DestinationSession => {
  const base = `v1/projects/${encodeURIComponent(config.projectId)}/secrets`;
  const latest = async (name: string) => {
    const answer = await call({ path: `${base}/${name}/versions/latest:access` });
    // No version, or the latest one disabled or destroyed: there is no value to compare.
    if (answer.status === 404 || answer.status === 400) return undefined;
    if (answer.status !== 200) throw apiFailure("Reading", name, answer);
    return fromBase64((answer.json().payload as { data?: unknown } | undefined)?.data);
  };
  const addVersion = async (name: string, value: string) => {
    const answer = await call({
      method: "POST",
      path: `${base}/${name}:addVersion`,
      body: { payload: { data: Buffer.from(value, "utf8").toString("base64") } },
    });
    if (answer.status !== 200) throw apiFailure("Writing", name, answer);
  };
  return {
    list: async (valueOf) => {
      const found = new Map<string, FoundSecret>();
      let token: string | undefined;
      do {
        const answer = await call({
          path: `${base}?pageSize=${PAGE}${token ? `&pageToken=${encodeURIComponent(token)}` : ""}`,
        });
        if (answer.status !== 200) throw apiFailure("Listing secrets", undefined, answer);
        const page = answer.json() as { secrets?: { name?: string }[]; nextPageToken?: string };
        for (const secret of page.secrets ?? []) {
          const name = secret.name?.split("/").pop();
          if (name) found.set(name, { name, value: valueOf(name) ? await latest(name) : undefined });
        }
        token = page.nextPageToken || undefined;
      } while (token);
      return found;
    },
    write: async (name, value, exists) => {
      if (!exists) {
        const created = await call({
          method: "POST",
          path: `${base}?secretId=${encodeURIComponent(name)}`,
          body: { replication: { automatic: {} } },
        });
        if (created.status === 409) throw new DestinationConflict(name);
        if (created.status !== 200) throw apiFailure("Creating", name, created);
      }
      await addVersion(name, value);
    },
    remove: async (name) => {
      const answer = await call({ method: "DELETE", path: `${base}/${name}` });
      if (answer.status !== 200 && answer.status !== 404) throw apiFailure("Deleting", name, answer);
    },
  };
};

/** Google Cloud Secret Manager: one secret per key in a project, each value a new version. */
export const gcpSecretManager: DestinationDriver = {
  nameOf: (_config, key) => (NAME.test(key) ? key : undefined),
  keyOf: (_config, name) => name,
  writesEmpty: false,
  readsValues: true,
  shape: (_config, values) => values,
  refOf: async (_deps, _connection, raw) => `gcp:${(raw as Config).projectId}`,
  use: async (deps: AppDeps, connection, raw, _options, work) => {
    const token = await gcpAccessToken(deps, credsOf(connection));
    return withBearerApi(deps, `${deps.env.GCP_SECRET_MANAGER_BASE_URL.replace(/\/$/, "")}/`, token, (call) =>
      work(session(call, raw as Config)),
    );
  },
};
