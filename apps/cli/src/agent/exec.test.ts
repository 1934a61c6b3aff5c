import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CommandRunner, splitCommand } from "./exec";
import type { LogFields, Logger } from "./log";

describe("splitCommand", () => {
  it("splits words and keeps quoted text whole, expanding nothing", () => {
    expect(splitCommand(`systemctl  reload "my app" 'a $HOME b' c\\ d`)).toEqual([
      "systemctl",
      "reload",
      "my app",
      "a $HOME b",
      "c d",
    ]);
    expect(splitCommand(`echo "say \\"hi\\"" '' x|y`)).toEqual(["echo", 'say "hi"', "", "x|y"]);
  });

  it("refuses an unclosed quote", () => {
    expect(() => splitCommand(`echo "oops`)).toThrow(/unclosed/);
  });
});

describe("CommandRunner", () => {
  const recorder = () => {
    const lines: { msg: string; fields?: LogFields }[] = [];
    const log: Logger = {
      info: (msg, fields) => lines.push({ msg, fields }),
      warn: (msg, fields) => lines.push({ msg, fields }),
      error: (msg, fields) => lines.push({ msg, fields }),
    };
    return { lines, log };
  };
  const until = async (check: () => boolean) => {
    for (let i = 0; i < 200 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 25));
    return check();
  };

  it("runs once for a burst of triggers and logs the exit code", async () => {
    const dir = mkdtempSync(join(tmpdir(), "keyward-exec-"));
    const runs = join(dir, "runs");
    const { lines, log } = recorder();
    const runner = new CommandRunner(
      "t",
      {
        command: `${process.execPath} -e "require('fs').appendFileSync('${runs}', 'x')"`,
        timeoutMs: 5000,
        shell: false,
      },
      log,
      100,
    );
    runner.trigger();
    runner.trigger();
    runner.trigger();
    expect(await until(() => lines.length === 1)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(readFileSync(runs, "utf8")).toBe("x");
    expect(lines).toEqual([{ msg: "command ran", fields: expect.objectContaining({ template: "t", exitCode: 0 }) }]);
    runner.stop();
  });

  it("kills a command that outlives its timeout", async () => {
    const { lines, log } = recorder();
    const runner = new CommandRunner("slow", { command: "sleep 30", timeoutMs: 200, shell: false }, log, 10);
    const started = Date.now();
    runner.trigger();
    expect(await until(() => lines.length === 1)).toBe(true);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(lines[0]).toMatchObject({
      msg: "command timed out and was killed",
      fields: { signal: "SIGTERM", timedOut: true },
    });
    runner.stop();
  });
});
