import { createApp } from "./app";
import { buildDeps } from "./deps";
import { loadEnv } from "./env";
import { createHttpServer } from "./http/server";
import { startJobs } from "./jobs";

const fail = (message: string) => {
  process.stderr.write(`${message}\n`);
  process.exit(1);
};

const main = async () => {
  let env;
  try {
    env = loadEnv();
  } catch (error) {
    return fail((error as Error).message);
  }
  const { deps, handle } = await buildDeps(env);
  const app = createApp(deps);
  const server = createHttpServer(app, env);
  const stopJobs = startJobs(deps);

  server.listen(env.PORT, env.HOST, () => {
    const address = server.address();
    const port = typeof address === "object" && address ? address.port : env.PORT;
    deps.logger.info({ port, host: env.HOST, database: deps.dbKind }, "keyward listening");
  });

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    deps.logger.info({ signal }, "shutting down: finishing in-flight requests");
    const force = setTimeout(() => server.closeAllConnections(), env.SHUTDOWN_TIMEOUT_MS);
    force.unref();
    server.close(() => {
      void (async () => {
        await stopJobs();
        deps.targetPools.clear();
        await handle.close();
        deps.logger.info("stopped");
        process.exit(0);
      })();
    });
    server.closeIdleConnections();
  };
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  process.on("SIGINT", () => shutdown("SIGINT"));
};

main().catch((error: unknown) =>
  fail(`Keyward failed to start: ${error instanceof Error ? error.message : String(error)}`),
);
