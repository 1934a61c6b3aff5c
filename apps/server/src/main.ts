import cluster from "node:cluster";
import { availableParallelism } from "node:os";
import { loadEnv, type Env } from "./env";
import { runPrimary } from "./runtime/primary";
import { runServer } from "./runtime/worker";

const fail = (message: string) => {
  process.stderr.write(`${message}\n`);
  process.exit(1);
};

/** PGlite is one file for one process: always one worker there. */
const workerCount = (env: Env) => (env.DATABASE_URL ? (env.WORKERS ?? availableParallelism()) : 1);

const main = async () => {
  let env;
  try {
    env = loadEnv();
  } catch (error) {
    return fail((error as Error).message);
  }
  const count = workerCount(env);
  if (count > 1 && cluster.isPrimary && env.DATABASE_URL)
    return runPrimary({ ...env, DATABASE_URL: env.DATABASE_URL }, count);
  return runServer(env);
};

main().catch((error: unknown) =>
  fail(`Keyward failed to start: ${error instanceof Error ? error.message : String(error)}`),
);
