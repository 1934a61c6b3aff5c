import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { createScope, upsertDevSecret } from "./helpers";
import { readIfAny, startKeyward, stopAgent, waitFor, type Running } from "./agent-helpers";

let scope: Awaited<ReturnType<typeof createScope>>;
const running: Running[] = [];
const pids: number[] = [];

const setWatched = (value: string) => upsertDevSecret(scope.project.id, "WATCHED", value);

/** Running and not a zombie (an exited process nobody has reaped yet is gone for this purpose). */
const alive = (pid: number) => {
  const stat = readIfAny(`/proc/${pid}/stat`);
  if (stat === undefined) return false;
  return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
};

/** The pid a grandchild wrote to `file`, once it has. */
const pidIn = (file: string) =>
  waitFor(`the pid in ${file}`, () => {
    const pid = Number(readIfAny(file)?.trim());
    if (pid > 0) pids.push(pid);
    return pid > 0 ? pid : undefined;
  });

/**
 * A shell that starts a sleep in the background and one in the foreground (through a shell that
 * writes its pid and execs the sleep), each writing its pid under the value it was given.
 */
const shell = (dir: string) => [
  "sh",
  "-c",
  `sleep 300 & echo $! > ${dir}/bg-$WATCHED; sh -c 'echo $$ > ${dir}/fg-'$WATCHED'; exec sleep 300'`,
];

beforeAll(async () => {
  scope = await createScope();
});

afterEach(async () => {
  await Promise.all(running.splice(0).map(stopAgent));
  for (const pid of pids.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Gone, as it should be.
    }
  }
});

describe("keyward run --watch and the command's own processes", () => {
  it("stops the command's whole process group at a restart and when keyward is stopped", async () => {
    const dir = mkdtempSync(join(tmpdir(), "keyward-run-group-"));
    await setWatched("g1");
    const r = startKeyward(
      ["run", ...scope.scope, "--watch", "--watch-grace", "3s", "--watch-poll-interval", "5m", "--", ...shell(dir)],
      scope.env,
    );
    running.push(r);
    const bg1 = await pidIn(join(dir, "bg-g1"));
    const fg1 = await pidIn(join(dir, "fg-g1"));
    expect(alive(bg1) && alive(fg1)).toBe(true);

    await setWatched("g2");
    const bg2 = await pidIn(join(dir, "bg-g2"));
    const fg2 = await pidIn(join(dir, "fg-g2"));
    // The restart took the old shell's background and foreground sleeps with it.
    await waitFor("the old sleeps to be gone", () => !alive(bg1) && !alive(fg1), 5000);
    expect(alive(bg2) && alive(fg2)).toBe(true);
    expect(r.stderr()).toContain("restarting the command");

    r.child.kill("SIGTERM");
    const exit = await r.exited;
    expect(exit.code).toBe(128 + 15);
    // Nothing the command started outlives keyward.
    await waitFor("the new sleeps to be gone", () => !alive(bg2) && !alive(fg2), 5000);
    expect(readFileSync(join(dir, "bg-g2"), "utf8").trim()).toBe(String(bg2));
  });

  it("stops what the command left in the background when it ends by itself, and ends with its code", async () => {
    const dir = mkdtempSync(join(tmpdir(), "keyward-run-group-"));
    const r = startKeyward(
      [
        "run",
        ...scope.scope,
        "--watch",
        "--watch-grace",
        "3s",
        "--",
        "sh",
        "-c",
        `sleep 300 & echo $! > ${dir}/bg; exit 4`,
      ],
      scope.env,
    );
    running.push(r);
    const bg = await pidIn(join(dir, "bg"));
    expect((await r.exited).code).toBe(4);
    expect(alive(bg)).toBe(false);
  });
});
