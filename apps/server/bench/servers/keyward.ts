import { createApp } from "../../src/app/create-app";
import { buildDeps } from "../../src/app/deps";
import { loadEnv } from "../../src/env";
import { createHttpServer } from "../../src/app/server";
import { startJobs } from "../../src/app/jobs";
import { tuneV8 } from "../../src/runtime/v8-tuning";
import { startMetricsServer } from "../../src/app/metrics-server";
import { listenForBench } from "./announce";

/**
 * Keyward itself, as a worker of main.ts builds it — background jobs included, so read events are
 * flushed to the audit log as in production — announcing its port for the bench runner.
 */
tuneV8();
const env = loadEnv();
const { deps, handle } = await buildDeps(env);
const server = createHttpServer(createApp(deps), env);
const stopJobs = startJobs(deps);
// With METRICS_PORT, `GET /metrics` as a single-process server serves it (cache sizes, pool, ...).
const metrics =
  env.METRICS_PORT === undefined
    ? undefined
    : startMetricsServer(env.METRICS_PORT, env.METRICS_HOST, deps.logger, async () => ({
        contentType: deps.metrics.registry.contentType,
        body: await deps.metrics.registry.metrics(),
      }));
listenForBench(server, () => {
  metrics?.close();
  return stopJobs().then(() => handle.close());
});
