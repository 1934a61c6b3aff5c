import { spawn, type ChildProcess } from "node:child_process";
import { constants } from "node:os";
import { Command } from "commander";
import { connect, type Api } from "../api";
import { parseDuration } from "../agent/duration";
import { CliError, resolveConnection } from "../config";
import { parentEnvironment } from "../env";
import { followProjectEvents, placeMatches, planRegistrations, type EventStream } from "../events/stream";
import { fetchSecretMap, pathsOf, withScope, type ScopeOptions } from "../scope";
import { isPersonProfile, renewSession } from "../session";

const FORWARDED = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2"] as const;

type WatchOptions = { watch?: boolean; watchSignal: string; watchGrace: string; watchPollInterval: string };

const exitCodeOf = (exitCode: number | null, signal: NodeJS.Signals | null) =>
  exitCode ?? 128 + (signal ? (constants.signals[signal] ?? 0) : 0);

const durationOption = (value: string, flag: string) => {
  const ms = parseDuration(value);
  if (ms === undefined) throw new CliError(`${flag}: not a duration: ${value} (e.g. 10s, 500ms, 1m)`);
  return ms;
};

const signalOption = (value: string): NodeJS.Signals => {
  const name = (
    value.toUpperCase().startsWith("SIG") ? value.toUpperCase() : `SIG${value.toUpperCase()}`
  ) as NodeJS.Signals;
  if (!(name in constants.signals)) throw new CliError(`--watch-signal: unknown signal ${value}`);
  return name;
};

/** Stops for a secret change: the same secrets, in any order. */
const sameSecrets = (a: Record<string, string>, b: Record<string, string>) => {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && a[k] === b[k]);
};

export const runCommand = () =>
  withScope(
    new Command("run")
      .description("run a command with the secrets in its environment; exits with the command's code")
      .argument("<command...>", "the command and its arguments (after --)"),
  )
    .option("--watch", "restart the command when the secrets it was given change (follows the events stream)")
    .option("--watch-signal <signal>", "with --watch: the signal that asks the command to stop", "SIGTERM")
    .option("--watch-grace <duration>", "with --watch: how long to wait for it before SIGKILL", "10s")
    .option(
      "--watch-poll-interval <duration>",
      "with --watch: how often to re-read the secrets while the events stream is unavailable",
      "30s",
    )
    .action(async (argv: string[], opts: ScopeOptions & WatchOptions) => {
      const [file] = argv;
      if (!file) throw new CliError("Give the command to run after --");
      const api = await connect();
      const secrets = await fetchSecretMap(api, opts);
      process.exitCode = opts.watch
        ? await runWatching(api, opts, argv, secrets, {
            signal: signalOption(opts.watchSignal),
            graceMs: durationOption(opts.watchGrace, "--watch-grace"),
            pollMs: Math.max(durationOption(opts.watchPollInterval, "--watch-poll-interval"), 1000),
          })
        : await runOnce(argv, secrets);
    });

/**
 * Starts the command. With `ownGroup` (run --watch) it leads a process group of its own, so what it
 * starts (a shell's commands, a server's workers) can be stopped with it: see signalGroup.
 */
const start = (argv: string[], secrets: Record<string, string>, ownGroup = false) => {
  const [file, ...args] = argv;
  return spawn(file!, args, { stdio: "inherit", env: { ...parentEnvironment(), ...secrets }, detached: ownGroup });
};

/** Signals sent to the command's whole group, as a terminal sends them; the others go to the command alone. */
const GROUP_SIGNALS = new Set<NodeJS.Signals>(["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGKILL"]);

/** Signal every process of the group `child` leads; false when none is left (EPERM: some are, out of reach). */
const signalGroup = (child: ChildProcess, signal: NodeJS.Signals | 0) => {
  if (child.pid === undefined) return false;
  try {
    process.kill(-child.pid, signal);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== "ESRCH";
  }
};

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Ask the command's group to stop with `signal` (unless it is undefined: the signal went already),
 * wait for the command to exit and for every process of its group to be gone, and SIGKILL the group
 * once `graceMs` has passed.
 */
const stopGroup = async (
  child: ChildProcess,
  childExit: Promise<unknown>,
  signal: NodeJS.Signals | undefined,
  graceMs: number,
) => {
  if (signal !== undefined && !signalGroup(child, signal)) child.kill(signal);
  const deadline = Date.now() + graceMs;
  const killer = setTimeout(() => {
    if (!signalGroup(child, "SIGKILL")) child.kill("SIGKILL");
  }, graceMs);
  try {
    await childExit.catch(() => undefined);
    // The command is gone; what it started in the background may not be. It gets the rest of the grace.
    while (signalGroup(child, 0) && Date.now() < deadline) await wait(50);
  } finally {
    clearTimeout(killer);
  }
  // Past the grace, whatever is left is killed. (A member that has exited but is not reaped yet, a
  // zombie, still counts as one, which is why the wait above is bounded.)
  if (signalGroup(child, "SIGKILL")) await wait(50);
};

/** Resolves with the exit code; rejects when the command cannot start. */
const exited = (child: ChildProcess, file: string) =>
  new Promise<number>((resolve, reject) => {
    child.once("error", (error) => reject(new CliError(`Cannot start ${file}: ${error.message}`, 127)));
    child.once("exit", (exitCode, signal) => resolve(exitCodeOf(exitCode, signal)));
  });

const runOnce = async (argv: string[], secrets: Record<string, string>) => {
  const child = start(argv, secrets);
  const forward = (signal: NodeJS.Signals) => () => child.kill(signal);
  const handlers = FORWARDED.map((signal) => [signal, forward(signal)] as const);
  for (const [signal, handler] of handlers) process.on(signal, handler);
  try {
    return await exited(child, argv[0]!);
  } finally {
    for (const [signal, handler] of handlers) process.off(signal, handler);
  }
};

/** Changes within this window make one restart. */
const DEBOUNCE_MS = 1000;

const note = (message: string) => process.stderr.write(`keyward: ${message}\n`);

/**
 * `run --watch`: the command runs with the secrets; when the folders it read change (the events
 * stream says so, or a poll while the stream is down finds different secrets), it is asked to stop
 * with `signal`, killed after `graceMs`, and started again with the secrets read anew. It ends
 * with the command's code when the command ends by itself.
 */
const runWatching = async (
  api: Api,
  scope: ScopeOptions,
  argv: string[],
  initial: Record<string, string>,
  { signal, graceMs, pollMs }: { signal: NodeJS.Signals; graceMs: number; pollMs: number },
): Promise<number> => {
  let secrets = initial;
  let child = start(argv, secrets, true);
  let childExit = exited(child, argv[0]!);
  let stopping = false;
  /** Restarts run one after another; `pending` counts those asked for and not finished. */
  let chain = Promise.resolve();
  let pending = 0;
  let debounce: NodeJS.Timeout | undefined;
  let pollTimer: NodeJS.Timeout | undefined;

  const restart = async () => {
    let next: Record<string, string>;
    try {
      // A fresh connection each time: a person's session is renewed as often as it needs.
      next = await fetchSecretMap(await connect(), scope);
    } catch (error) {
      note(
        `cannot re-read the secrets; the command keeps running (${error instanceof Error ? error.message : String(error)})`,
      );
      return;
    }
    if (stopping || sameSecrets(next, secrets)) return;
    note(`the secrets changed; restarting the command (${signal}, then SIGKILL after ${graceMs} ms)`);
    // The whole group: a shell's commands and what they started in the background go too.
    await stopGroup(child, childExit, signal, graceMs);
    if (stopping) return;
    secrets = next;
    child = start(argv, secrets, true);
    childExit = exited(child, argv[0]!);
  };

  const changed = () => {
    clearTimeout(debounce);
    debounce = setTimeout(() => {
      // One restart at a time; a change during one is looked at after it.
      pending++;
      chain = chain
        .then(restart)
        .catch(() => undefined)
        .finally(() => pending--);
    }, DEBOUNCE_MS);
  };

  const { profile, tokenSource, token } = resolveConnection();
  let bearer = token!;
  let streamDown = false;
  const folders = pathsOf(scope).map((path) => ({ environment: scope.env, path, recursive: scope.recursive }));
  const streams: EventStream[] = planRegistrations(folders).map((registrations) =>
    followProjectEvents({
      url: api.url,
      projectId: scope.projectId,
      registrations,
      token: () => bearer,
      handlers: {
        // What changed since the secrets were read (before the first open, or while the stream was
        // down) is found by comparing; an unchanged read restarts nothing.
        onOpen: () => {
          streamDown = false;
          changed();
        },
        onChange: (_event, places) => {
          if (places.some((p) => folders.some((f) => placeMatches(p, f.environment, f.path, f.recursive)))) changed();
        },
        onResync: changed,
        onDown: (reason) => {
          // Said once per outage, not at every retry.
          if (!streamDown) note(`events stream unavailable (${reason}); re-reading the secrets every ${pollMs} ms`);
          streamDown = true;
        },
        onAuthProblem: async () => {
          if (tokenSource === "profile" && isPersonProfile(profile)) bearer = (await renewSession(bearer)).token;
        },
      },
    }),
  );
  // While the stream is down, the secrets are compared at the poll interval.
  const poll = () => {
    pollTimer = setTimeout(() => {
      if (!streams.every((s) => s.connected)) changed();
      poll();
    }, pollMs);
  };
  poll();

  // The command leads its own group, so a terminal's Ctrl-C reaches only keyward: it passes it on.
  const forward = (sig: NodeJS.Signals) => () => {
    if (sig === "SIGINT" || sig === "SIGTERM") stopping = true;
    if (!GROUP_SIGNALS.has(sig) || !signalGroup(child, sig)) child.kill(sig);
  };
  const handlers = FORWARDED.map((sig) => [sig, forward(sig)] as const);
  for (const [sig, handler] of handlers) process.on(sig, handler);
  try {
    for (;;) {
      const current = child;
      const code = await childExit;
      // A child that ended because it was restarted is replaced; any other end is the command's own.
      if (pending > 0 && !stopping) await chain;
      if (current !== child) continue;
      return code;
    }
  } finally {
    stopping = true;
    clearTimeout(debounce);
    clearTimeout(pollTimer);
    for (const s of streams) s.stop();
    // Nothing the command started outlives keyward: what is left of its group is asked to stop
    // (as by the restart signal), then killed after the grace.
    if (signalGroup(child, 0)) await stopGroup(child, childExit, signal, graceMs);
    for (const [sig, handler] of handlers) process.off(sig, handler);
  }
};
