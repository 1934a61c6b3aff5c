import { afterEach, beforeAll, inject } from "vitest";
import { ok } from "@keyward/client";
import { admin, createScope, unique, url } from "./helpers";
import { postgresProvider } from "./postgres-target";
import { startKeyward, stopAgent, type LogLine, type Running } from "./agent-helpers";

/** The project every agent of this file reads, made once per file. */
export const suite = {} as { scope: Awaited<ReturnType<typeof createScope>> };
const running: Running[] = [];

export const agent = (configFile: string) => {
  const started = startKeyward(["agent", "--config", configFile]);
  running.push(started);
  return started;
};

export const setSecrets = (secrets: Record<string, string>, secretPath = "/") =>
  ok(
    admin().secretsV4.batchUpdate({
      body: {
        projectId: suite.scope.project.id,
        environment: "dev",
        secretPath,
        mode: "upsert",
        secrets: Object.entries(secrets).map(([secretKey, secretValue]) => ({ secretKey, secretValue })),
      },
    }),
  );

export const server = () => ({ address: url() });
export const tokenAuth = () => ({ type: "token", config: { token: suite.scope.token } });
export const universalAuth = () => ({
  type: "universal-auth",
  config: { "client-id-value": suite.scope.clientId, "client-secret-value": suite.scope.clientSecret },
});
export const logged = (a: Running, msg: string, match: (l: LogLine) => boolean = () => true) =>
  a.lines.find((l) => l.msg === msg && match(l));

/** A dynamic secret on the test PostgreSQL with one-minute leases and the given max TTL. */
export const createPgDynamicSecret = async (maxTTL: string) => {
  const target = new URL(inject("pgTargetUrl"));
  const name = unique("pg");
  await ok(
    admin().dynamicSecrets.create({
      body: {
        projectSlug: suite.scope.project.slug,
        environmentSlug: "dev",
        path: "/",
        name,
        provider: postgresProvider(target),
        defaultTTL: "1m",
        maxTTL,
      },
    }),
  );
  return name;
};

/** A project with two secrets for the file's agents, and every agent a test started stopped after it. */
export const useAgentSuite = () => {
  beforeAll(async () => {
    suite.scope = await createScope();
    await setSecrets({ DB_URL: "postgres://one", API_KEY: "k1" });
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map(stopAgent));
  });
};
