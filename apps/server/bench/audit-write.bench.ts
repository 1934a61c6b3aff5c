import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { buildDeps } from "../src/app/deps";
import { loadEnv } from "../src/env";
import { bufferAuditEvent, flushAuditBuffer } from "../src/modules/audit/audit-buffer";
import type { AuditEventInput } from "../src/modules/audit/audit-writer";
import { startPostgres } from "./lib/processes";

/**
 * The cost of one read event on its way to the audit log, on PostgreSQL: recorded as a secret read
 * records it (metadata copied and serialised), then flushed the way the flush job does (chain head
 * locked, hashed, inserted with its outbox rows, in batches). Reported per event: the server's CPU
 * (the share a read pays on its own thread or later in the flush) and the wall time (the database
 * included), median of 7 rounds of 4,000 events.
 */
const EVENTS = 4_000;
const ROUNDS = 8;

const pg = await startPostgres();
const { deps, handle } = await buildDeps(
  loadEnv({ ...process.env, DATABASE_URL: pg.url, DATA_DIR: mkdtempSync(join(tmpdir(), "keyward-bench-")) }),
);
try {
  const orgId = randomUUID();
  const projectId = randomUUID();
  const identityId = randomUUID();
  const event = (i: number): AuditEventInput => ({
    orgId,
    projectId,
    actor: { type: "identity", id: identityId, metadata: { identityId, name: "bench", authMethod: "universal-auth" } },
    type: "get-secret",
    metadata: { environment: "dev", secretPath: "/app", secretKey: `APP_SECRET_${i % 64}`, secretVersion: 1 },
    ipAddress: "127.0.0.1",
    userAgent: "InfisicalNodeSDK/5.0",
    createdAt: new Date(),
  });
  const cpu: number[] = [];
  const wall: number[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    const cpu0 = process.cpuUsage();
    const wall0 = performance.now();
    for (let i = 0; i < EVENTS; i += 1) bufferAuditEvent(deps, event(i));
    await flushAuditBuffer(deps);
    const used = process.cpuUsage(cpu0);
    // The first round warms the JIT and the connections.
    if (round === 0) continue;
    cpu.push((used.user + used.system) / EVENTS);
    wall.push(((performance.now() - wall0) * 1000) / EVENTS);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  console.log(
    `read event to the audit log (PostgreSQL, ${EVENTS} per round): server CPU ${median(cpu).toFixed(1)} µs/event, ` +
      `wall ${median(wall).toFixed(1)} µs/event (rounds: CPU ${cpu.map((x) => x.toFixed(1)).join(" ")})`,
  );
} finally {
  await handle.close();
  pg.stop();
}
