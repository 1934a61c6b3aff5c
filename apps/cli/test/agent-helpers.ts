import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { BIN } from "./helpers";

export type LogLine = { level: string; msg: string; [field: string]: unknown };

/** A running `keyward agent` (or any long-running keyward) with its JSON log lines collected. */
export type Running = {
  child: ChildProcess;
  lines: LogLine[];
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
};

export const startKeyward = (args: string[], env: Record<string, string> = {}): Running => {
  const configDir = mkdtempSync(join(tmpdir(), "keyward-cli-config-"));
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, XDG_CONFIG_HOME: configDir, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: LogLine[] = [];
  let stdout = "";
  let stderr = "";
  let partial = "";
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr.on("data", (c: Buffer) => {
    stderr += c.toString();
    partial += c.toString();
    const parts = partial.split("\n");
    partial = parts.pop()!;
    for (const line of parts) {
      try {
        lines.push(JSON.parse(line) as LogLine);
      } catch {
        // Not a log line (a command's own output).
      }
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  return { child, lines, stdout: () => stdout, stderr: () => stderr, exited };
};

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Poll `check` until it returns something truthy, or fail with `what` after `ms`. */
export const waitFor = async <T>(what: string, check: () => T | Promise<T>, ms = 10_000): Promise<NonNullable<T>> => {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
};

export const readIfAny = (path: string) => {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
};

/** A folder for one test's files, and a config writer for it. */
export const workspace = () => {
  const dir = mkdtempSync(join(tmpdir(), "keyward-agent-"));
  const runsFile = join(dir, "runs.log");
  const counter = join(dir, "count.cjs");
  // The command templates run: one line per run, so a test can count them.
  writeFileSync(counter, `require("fs").appendFileSync(process.argv[2], "run\\n");\n`);
  return {
    dir,
    path: (name: string) => join(dir, name),
    /** The argv of a command that records one run. */
    countCommand: `${process.execPath} ${counter} ${runsFile}`,
    runs: () => (readIfAny(runsFile) ?? "").split("\n").filter(Boolean).length,
    writeConfig: (config: unknown, name = "agent.yaml") => {
      const file = join(dir, name);
      writeFileSync(file, stringify(config));
      return file;
    },
  };
};

export const stopAgent = async (agent: Running) => {
  if (agent.child.exitCode === null && agent.child.signalCode === null) agent.child.kill("SIGTERM");
  return agent.exited;
};
