import cluster from "node:cluster";
import { availableParallelism } from "node:os";
import { loadEnv, type Env } from "./env";
import { parseCommand, USAGE } from "./runtime/command-line";

const fail = (message: string, code = 1) => {
  process.stderr.write(`${message}\n`);
  process.exit(code);
};

/** PGlite is one file for one process: always one worker there. */
const workerCount = (env: Env) => (env.DATABASE_URL ? (env.WORKERS ?? availableParallelism()) : 1);

const main = async () => {
  // Read before anything starts: a wrong argument never serves, migrates or opens a database.
  const command = parseCommand(process.argv.slice(2));
  if (!command) return fail(USAGE, 2);
  let env;
  try {
    env = loadEnv();
  } catch (error) {
    return fail((error as Error).message);
  }
  if (command.kind === "backup") {
    const { runBackupCommand } = await import("./runtime/backup-command");
    return runBackupCommand(env, command.file);
  }
  if (command.kind === "restore") {
    const { runRestoreCommand } = await import("./runtime/restore-command");
    return runRestoreCommand(env, command.file);
  }
  const count = workerCount(env);
  // Each role loads only its own code: the cluster primary never needs the app, its modules and the contract.
  if (count > 1 && cluster.isPrimary && env.DATABASE_URL) {
    const { runPrimary } = await import("./runtime/primary");
    return runPrimary({ ...env, DATABASE_URL: env.DATABASE_URL }, count);
  }
  const { runServer } = await import("./runtime/worker");
  return runServer(env);
};

main().catch((error: unknown) =>
  fail(`Keyward failed to start: ${error instanceof Error ? error.message : String(error)}`),
);
