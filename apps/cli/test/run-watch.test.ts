import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { ok } from "@keyward/client";
import { admin, createScope, keyward, upsertDevSecret } from "./helpers";
import { sleep, startKeyward, stopAgent, waitFor, type Running } from "./agent-helpers";

let scope: Awaited<ReturnType<typeof createScope>>;
const running: Running[] = [];

const setWatched = (value: string) => upsertDevSecret(scope.project.id, "WATCHED", value);

/** A child that prints the value it got and then waits; it ignores SIGUSR2 (saying so) and ends on SIGTERM. */
const CHILD = [
  process.execPath,
  "-e",
  `console.log("start " + process.env.WATCHED);
   process.on("SIGUSR2", () => console.log("ignoring SIGUSR2"));
   process.on("SIGTERM", () => { console.log("stopping"); process.exit(0); });
   setInterval(() => {}, 1000);`,
];

const run = (flags: string[]) => {
  const started = startKeyward(["run", ...scope.scope, ...flags, "--", ...CHILD], scope.env);
  running.push(started);
  return started;
};

const starts = (r: Running) => r.stdout().match(/^start .*$/gm) ?? [];

beforeAll(async () => {
  scope = await createScope();
  await setWatched("v1");
});

afterEach(async () => {
  await Promise.all(running.splice(0).map(stopAgent));
});

describe("keyward run --watch", () => {
  it("restarts the command with the new value, with the given signal and grace before SIGKILL", async () => {
    // Polling only every 5 minutes: the change comes through the events stream.
    const r = run(["--watch", "--watch-signal", "SIGUSR2", "--watch-grace", "1500ms", "--watch-poll-interval", "5m"]);
    await waitFor("the first start", () => starts(r).length === 1);
    expect(starts(r)).toEqual(["start v1"]);

    // A burst: one restart, with the last value.
    await setWatched("v2");
    await setWatched("v3");
    await waitFor("the signal", () => r.stdout().includes("ignoring SIGUSR2"), 5000);
    const signalledAt = Date.now();
    await waitFor("the restart", () => starts(r).length === 2, 5000);
    // The command ignored SIGUSR2, so it was killed only after the grace.
    expect(Date.now() - signalledAt).toBeGreaterThanOrEqual(1300);
    expect(starts(r)).toEqual(["start v1", "start v3"]);
    await sleep(2000);
    expect(starts(r)).toHaveLength(2);
    expect(r.stderr()).not.toContain("v3");
  });

  it("asks with SIGTERM by default and ends with the command's own code", async () => {
    const r = run(["--watch"]);
    await waitFor("the first start", () => starts(r).length === 1);
    await setWatched("v4");
    await waitFor("the restart", () => starts(r).length === 2, 5000);
    expect(r.stdout()).toContain("stopping");
    expect(starts(r)[1]).toBe("start v4");

    const ending = await keyward(
      [
        "run",
        ...scope.scope,
        "--watch",
        "--",
        process.execPath,
        "-e",
        "console.log(process.env.WATCHED); process.exit(3)",
      ],
      { env: scope.env },
    );
    expect(ending.code).toBe(3);
    expect(ending.stdout).toBe("v4\n");
  });

  it("re-reads the secrets at the poll interval when the events stream is refused", async () => {
    // A reader whose role lacks secret-events: its stream is refused.
    const viewer = await createScope("secret-reader", [
      { subject: "secrets", action: ["describeSecret", "readValue"] },
      { subject: "secret-folders", action: ["read"] },
    ]);
    const setFor = (value: string) =>
      ok(
        admin().secretsV4.batchUpdate({
          body: {
            projectId: viewer.project.id,
            environment: "dev",
            secretPath: "/",
            mode: "upsert",
            secrets: [{ secretKey: "WATCHED", secretValue: value }],
          },
        }),
      );
    await setFor("p1");
    const r = startKeyward(
      ["run", ...viewer.scope, "--watch", "--watch-poll-interval", "1s", "--", ...CHILD],
      viewer.env,
    );
    running.push(r);
    await waitFor("the first start", () => starts(r).length === 1);
    await waitFor("the note", () => r.stderr().includes("events stream unavailable (403"));
    await setFor("p2");
    await waitFor("the restart", () => starts(r).length === 2, 5000);
    expect(starts(r)).toEqual(["start p1", "start p2"]);
  });

  it("does not restart the command without --watch", async () => {
    const r = run([]);
    await waitFor("the first start", () => starts(r).length === 1);
    await setWatched("v5");
    await sleep(2500);
    expect(starts(r)).toHaveLength(1);
    expect(r.child.exitCode).toBeNull();
    r.child.kill("SIGTERM");
    expect((await r.exited).code).toBe(0);
  });
});
