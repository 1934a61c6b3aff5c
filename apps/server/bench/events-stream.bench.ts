import { readFileSync } from "node:fs";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createKeywardClient } from "@keyward/client";
import { setupOk } from "./lib/endpoint";
import { spawnServer, startPostgres, type Spawned } from "./lib/processes";

/**
 * The project events stream on PostgreSQL, two instances: BENCH_SUBSCRIBERS streams (200 by
 * default) held open on instance B while instance A takes BENCH_RATE secret creates per second (50)
 * for BENCH_DURATION seconds (10). Prints B's resident memory and CPU with the streams idle (memory
 * per stream), then the delivery latency of every event to every subscriber, from the moment its
 * create was sent through A to the moment the subscriber read it from B (p50, p99, max).
 */
const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 200);
const RATE = Number(process.env.BENCH_RATE ?? 50);
const SECONDS = Number(process.env.BENCH_DURATION ?? 10);

const rssMiB = (pid: number) => {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").match(/VmRSS:\s+(\d+) kB/);
  return Number(line![1]) / 1024;
};
/** CPU seconds (user + system) the process used so far. */
const cpuSeconds = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;

const pgServer = await startPostgres();
const servers: Spawned[] = [];
const aborts: AbortController[] = [];
try {
  for (let i = 0; i < 2; i += 1)
    servers.push(
      await spawnServer("bench/servers/keyward.ts", {
        DATABASE_URL: pgServer.url,
        DATA_DIR: mkdtempSync(join(tmpdir(), "keyward-bench-")),
        EVENTS_MAX_STREAMS_PER_ACTOR: String(SUBSCRIBERS),
      }),
    );
  const [a, b] = servers as [Spawned, Spawned];
  const boot = await createKeywardClient({ baseUrl: a.url }).system.bootstrap({
    body: { email: "bench@keyward.test", password: "bench", organization: "Bench" },
  });
  if (boot.status !== 200) throw new Error(`bootstrap failed: ${JSON.stringify(boot.body)}`);
  const token = boot.body.identity.credentials.token;
  const admin = createKeywardClient({ baseUrl: a.url, token });
  const { project } = setupOk(await admin.projects.create({ body: { projectName: "bench-events" } }));
  // Warm both instances' paths once.
  setupOk(
    await admin.secretsV4.create({
      params: { secretName: "WARM" },
      body: { projectId: project.id, environment: "dev", secretPath: "/", secretValue: "v" },
    }),
  );
  await sleep(2_000);
  const rssBefore = rssMiB(b.pid);
  const cpuBaseStart = cpuSeconds(b.pid);
  await sleep(10_000);
  const cpuBase = cpuSeconds(b.pid) - cpuBaseStart;

  const sentAt = new Map<string, number>();
  const latencies: number[] = [];
  let received = 0;
  const open = async () => {
    const controller = new AbortController();
    aborts.push(controller);
    const response = await fetch(`${b.url}/api/v1/events/subscribe/project-events`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({
        projectId: project.id,
        register: [{ event: "secret:create", conditions: { environmentSlug: "dev", secretPath: "/" } }],
      }),
      signal: controller.signal,
    });
    if (response.status !== 200) throw new Error(`subscribe answered ${response.status}: ${await response.text()}`);
    void (async () => {
      const decoder = new TextDecoder();
      try {
        for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
          const now = performance.now();
          for (const match of decoder.decode(chunk, { stream: true }).matchAll(/"secretKey":"(E_\d+)"/g)) {
            const sent = sentAt.get(match[1]!);
            if (sent !== undefined) latencies.push(now - sent);
            received += 1;
          }
        }
      } catch {
        // Aborted at the end.
      }
    })();
  };
  for (let i = 0; i < SUBSCRIBERS; i += 1) await open();
  await sleep(5_000);
  const rssIdle = rssMiB(b.pid);
  const cpuIdleStart = cpuSeconds(b.pid);
  await sleep(10_000);
  const cpuIdle = cpuSeconds(b.pid) - cpuIdleStart;

  const total = RATE * SECONDS;
  const cpuLoadStart = cpuSeconds(b.pid);
  const started = performance.now();
  const writes: Promise<unknown>[] = [];
  for (let n = 0; n < total; n += 1) {
    const due = started + (n * 1_000) / RATE;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    const key = `E_${n}`;
    sentAt.set(key, performance.now());
    writes.push(
      admin.secretsV4
        .create({
          params: { secretName: key },
          body: { projectId: project.id, environment: "dev", secretPath: "/", secretValue: "v" },
        })
        .then(setupOk),
    );
  }
  await Promise.all(writes);
  const deadline = performance.now() + 10_000;
  while (received < total * SUBSCRIBERS && performance.now() < deadline) await sleep(100);
  const cpuLoad = cpuSeconds(b.pid) - cpuLoadStart;
  latencies.sort((x, y) => x - y);

  console.log(`instance B, ${SUBSCRIBERS} idle streams`);
  console.log(
    `  resident memory ${rssBefore.toFixed(1)} -> ${rssIdle.toFixed(1)} MiB: +${(rssIdle - rssBefore).toFixed(1)} MiB, ` +
      `${(((rssIdle - rssBefore) * 1024) / SUBSCRIBERS).toFixed(1)} KiB per stream`,
  );
  console.log(
    `  CPU over 10 s: ${(cpuBase * 1000).toFixed(0)} ms without streams (background jobs), ` +
      `${(cpuIdle * 1000).toFixed(0)} ms with them idle (keep-alive pings; a re-check every EVENTS_RECHECK_INTERVAL_S)`,
  );
  console.log(`${RATE} creates/s through instance A for ${SECONDS} s, each to ${SUBSCRIBERS} subscribers of B`);
  console.log(
    `  delivered ${received} of ${total * SUBSCRIBERS}; latency p50 ${percentile(latencies, 0.5).toFixed(1)} ms, ` +
      `p99 ${percentile(latencies, 0.99).toFixed(1)} ms, max ${latencies.at(-1)!.toFixed(1)} ms`,
  );
  console.log(`  instance B CPU while delivering: ${(cpuLoad * 1000).toFixed(0)} ms over ~${SECONDS} s`);
} finally {
  for (const controller of aborts) controller.abort();
  for (const server of servers) await server.stop();
  pgServer.stop();
}
