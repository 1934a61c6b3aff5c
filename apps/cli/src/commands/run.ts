import { spawn } from "node:child_process";
import { constants } from "node:os";
import { Command } from "commander";
import { connect } from "../api";
import { CliError } from "../config";
import { parentEnvironment } from "../env";
import { fetchSecretMap, withScope, type ScopeOptions } from "../scope";

const FORWARDED = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2"] as const;

export const runCommand = () =>
  withScope(
    new Command("run")
      .description("run a command with the secrets in its environment; exits with the command's code")
      .argument("<command...>", "the command and its arguments (after --)"),
  ).action(async (argv: string[], opts: ScopeOptions) => {
    const secrets = await fetchSecretMap(await connect(), opts);
    const [file, ...args] = argv;
    if (!file) throw new CliError("Give the command to run after --");
    const child = spawn(file, args, { stdio: "inherit", env: { ...parentEnvironment(), ...secrets } });
    const forward = (signal: NodeJS.Signals) => () => child.kill(signal);
    const handlers = FORWARDED.map((signal) => [signal, forward(signal)] as const);
    for (const [signal, handler] of handlers) process.on(signal, handler);
    const code = await new Promise<number>((resolve, reject) => {
      child.on("error", (error) => reject(new CliError(`Cannot start ${file}: ${error.message}`, 127)));
      child.on("exit", (exitCode, signal) =>
        resolve(exitCode ?? 128 + (signal ? (constants.signals[signal] ?? 0) : 0)),
      );
    });
    for (const [signal, handler] of handlers) process.off(signal, handler);
    process.exitCode = code;
  });
