import { spawn } from "node:child_process";
import { reasonOf, type Logger } from "./log";

/**
 * Split a command line into argv the way a POSIX shell would for plain words, single and double
 * quotes and backslashes, without expanding anything: no variables, globs, pipes or redirections.
 */
export const splitCommand = (line: string): string[] => {
  const argv: string[] = [];
  let word: string | undefined;
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else word = (word ?? "") + c;
    } else if (quote === '"') {
      if (c === '"') quote = undefined;
      else if (c === "\\" && i + 1 < line.length && '"\\$`'.includes(line[i + 1]!)) word = (word ?? "") + line[++i];
      else word = (word ?? "") + c;
    } else if (c === "'" || c === '"') {
      quote = c;
      word ??= "";
    } else if (c === "\\" && i + 1 < line.length) {
      word = (word ?? "") + line[++i];
    } else if (/\s/.test(c)) {
      if (word !== undefined) argv.push(word);
      word = undefined;
    } else {
      word = (word ?? "") + c;
    }
  }
  if (quote) throw new Error(`unclosed ${quote} in the command`);
  if (word !== undefined) argv.push(word);
  return argv;
};

/** After SIGTERM at the timeout, this long for the command to end before SIGKILL. */
const KILL_GRACE_MS = 5_000;

/**
 * Runs a template's command after its file changed: changes within `debounceMs` of each other make
 * one run, and a change during a run makes one more run after it. Output goes to the agent's stderr.
 */
export class CommandRunner {
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private again = false;
  private stopped = false;

  constructor(
    private readonly template: string,
    private readonly spec: { command: string; timeoutMs: number; shell: boolean },
    private readonly log: Logger,
    private readonly debounceMs = 1000,
  ) {}

  trigger() {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.fire(), this.debounceMs);
  }

  private async fire() {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    try {
      await this.runOnce();
    } finally {
      this.running = false;
      if (this.again && !this.stopped) {
        this.again = false;
        this.trigger();
      }
    }
  }

  private runOnce() {
    return new Promise<void>((resolve) => {
      let argv: string[];
      try {
        argv = this.spec.shell ? ["/bin/sh", "-c", this.spec.command] : splitCommand(this.spec.command);
      } catch (error) {
        this.log.error("command not run", { template: this.template, reason: reasonOf(error) });
        return resolve();
      }
      const [file, ...args] = argv;
      if (!file) return resolve();
      const started = Date.now();
      const child = spawn(file, args, { stdio: ["ignore", "inherit", "inherit"] });
      let timedOut = false;
      let killer: NodeJS.Timeout | undefined;
      const timeout = setTimeout(() => {
        timedOut = true;
        child.kill("SIGTERM");
        killer = setTimeout(() => child.kill("SIGKILL"), KILL_GRACE_MS);
      }, this.spec.timeoutMs);
      child.on("error", (error) => {
        clearTimeout(timeout);
        this.log.error("command could not start", { template: this.template, reason: error.message });
        resolve();
      });
      child.on("exit", (code, signal) => {
        clearTimeout(timeout);
        clearTimeout(killer);
        const fields = { template: this.template, exitCode: code, signal, ms: Date.now() - started, timedOut };
        if (code === 0) this.log.info("command ran", fields);
        else this.log.warn(timedOut ? "command timed out and was killed" : "command failed", fields);
        resolve();
      });
    });
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
  }
}
