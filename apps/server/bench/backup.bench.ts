import { execFileSync, spawn } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { createKeywardClient } from "@keyward/client";
import { createSecretBox } from "../src/crypto/envelope";
import { eventHash, GENESIS_HASH } from "../src/modules/audit/audit-chain";
import { openProjectDataKey } from "../src/modules/project-keys/project-key.service";
import { secretAad } from "../src/modules/secrets/secret-crypto";
import { freePort, startPostgres } from "./lib/processes";

/**
 * Backup and restore at volume: BENCH_BACKUP_SECRETS secrets (100,000 by default, each with one version)
 * and BENCH_BACKUP_EVENTS audit events (1,000,000, in ten chains, hashed as the writer hashes them, so
 * the restore's checks pass) on PostgreSQL 15. Then, each as `node dist/main.js …` (built first):
 * backup from PostgreSQL, restore into an empty PostgreSQL database, restore into a new PGlite
 * DATA_DIR, backup from that PGlite. Prints each one's time, peak RSS and the file's size. Run it at
 * two sizes to see that memory does not grow with the size; BENCH_BACKUP_NODE_ARGS passes node options
 * (a CPU profile, say) to the measured commands.
 */
const SECRETS = Number(process.env.BENCH_BACKUP_SECRETS ?? 100_000);
const EVENTS = Number(process.env.BENCH_BACKUP_EVENTS ?? 1_000_000);
/** Extra node options for the measured commands, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`. */
const NODE_ARGS = (process.env.BENCH_BACKUP_NODE_ARGS ?? "").split(" ").filter(Boolean);
const CHAINS = 10;
const BATCH = 5_000;

const serverDir = new URL("..", import.meta.url).pathname;
const main = join(serverDir, "dist/main.js");
execFileSync(process.execPath, [join(serverDir, "node_modules/tsup/dist/cli-default.js")], {
  cwd: serverDir,
  stdio: "ignore",
});
execFileSync(process.execPath, [join(serverDir, "dist/write-template.js")], { cwd: serverDir, stdio: "ignore" });

const key = randomBytes(32).toString("base64");
const scratch = mkdtempSync(join(tmpdir(), "keyward-bench-backup-"));
const pgServer = await startPostgres();
const admin = new pg.Client({ connectionString: pgServer.url });
await admin.connect();
const urlOf = (name: string) => pgServer.url.replace(/\/postgres$/, `/${name}`);
await admin.query("create database source");
await admin.query("create database target");

/** A run of the built entry: wall time and the process's peak RSS (VmHWM, read until it exits). */
const command = (args: string[], env: Record<string, string>) =>
  new Promise<{ ms: number; peakMb: number; out: string }>((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [...NODE_ARGS, main, ...args], {
      cwd: serverDir,
      env: { PATH: process.env.PATH ?? "", LOG_LEVEL: "warn", ENCRYPTION_KEY: key, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let peakKb = 0;
    const sample = setInterval(() => {
      try {
        const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"));
        if (hwm) peakKb = Math.max(peakKb, Number(hwm[1]));
      } catch {
        // exited between two samples
      }
    }, 20);
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.once("exit", (code) => {
      clearInterval(sample);
      if (code !== 0) reject(new Error(`${args.join(" ")} exited with ${code}: ${out}`));
      else resolve({ ms: performance.now() - started, peakMb: peakKb / 1024, out: out.trim() });
    });
  });

const seed = async () => {
  // Migrated and set up by the server itself: an organization, a project and one secret (its data key).
  const port = await freePort();
  const server = spawn(process.execPath, [main], {
    cwd: serverDir,
    env: {
      ...process.env,
      DATABASE_URL: urlOf("source"),
      ENCRYPTION_KEY: key,
      WORKERS: "1",
      PORT: String(port),
      LOG_LEVEL: "warn",
    },
    stdio: "ignore",
  });
  const url = `http://127.0.0.1:${port}`;
  while (
    !(await fetch(`${url}/api/status`).then(
      (r) => r.ok,
      () => false,
    ))
  )
    await new Promise((r) => setTimeout(r, 100));
  const boot = await createKeywardClient({ baseUrl: url }).system.bootstrap({
    body: { email: "bench@keyward.test", password: "bench-password", organization: "Bench" },
  });
  if (boot.status !== 200) throw new Error("bootstrap failed");
  const client = createKeywardClient({ baseUrl: url, token: boot.body.identity.credentials.token });
  const project = await client.projects.create({ body: { projectName: "backup-bench" } });
  if (project.status !== 200) throw new Error("project failed");
  const projectId = project.body.project.id;
  const first = await client.secretsV4.create({
    params: { secretName: "FIRST" },
    body: { projectId, environment: "dev", secretPath: "/", secretValue: "first" },
  });
  if (first.status !== 200) throw new Error("secret failed");
  await new Promise<void>((resolve) => {
    server.once("exit", () => resolve());
    server.kill("SIGTERM");
  });

  const db = new pg.Client({ connectionString: urlOf("source") });
  await db.connect();
  await db.query("set synchronous_commit = off");
  const keyRow = (await db.query("select id, wrapped_key from project_data_keys where project_id = $1", [projectId]))
    .rows[0];
  const dataKey = openProjectDataKey(createSecretBox(Buffer.from(key, "base64")), projectId, keyRow);
  const folderId = (await db.query("select folder_id from secrets where key = 'FIRST'")).rows[0].folder_id as string;
  const started = performance.now();
  for (let from = 0; from < SECRETS; from += BATCH) {
    const rows = [];
    for (let i = from; i < Math.min(SECRETS, from + BATCH); i += 1) {
      const id = randomUUID();
      const versionId = randomUUID();
      const parts = [`value-${i}-${randomBytes(12).toString("hex")}`, `comment ${i}`];
      rows.push({
        id,
        v: versionId,
        k: `BENCH_${String(i).padStart(6, "0")}`,
        f: dataKey.sealParts(parts, secretAad("secrets", id, "fields")),
        vf: dataKey.sealParts(parts, secretAad("secret_versions", versionId, "fields")),
      });
    }
    const json = JSON.stringify(rows);
    await db.query(
      `insert into secrets (id, folder_id, key, encrypted_fields, encrypted_value, encrypted_comment)
       select x.id, $2, x.k, x.f, null, null from jsonb_to_recordset($1::jsonb) as x(id uuid, k text, f text)`,
      [json, folderId],
    );
    await db.query(
      `insert into secret_versions (id, secret_id, folder_id, version, key, type, encrypted_fields, encrypted_value,
         encrypted_comment, skip_multiline_encoding, metadata, tag_ids)
       select x.v, x.id, $2, 1, x.k, 'shared', x.vf, null, null, false, '[]', '[]'
       from jsonb_to_recordset($1::jsonb) as x(id uuid, v uuid, k text, vf text)`,
      [json, folderId],
    );
  }
  const chains = Array.from({ length: CHAINS }, () => ({ id: randomUUID(), seq: 0, hash: GENESIS_HASH }));
  const base = Date.now() - 86_400_000;
  for (let from = 0; from < EVENTS; from += BATCH) {
    const batch = [];
    for (let g = from; g < Math.min(EVENTS, from + BATCH); g += 1) {
      const chain = chains[g % CHAINS]!;
      chain.seq += 1;
      const createdAt = new Date(base + g);
      const row = {
        id: randomUUID(),
        orgId: boot.body.organization.id,
        projectId,
        projectName: "backup-bench",
        chainId: chain.id,
        seq: String(chain.seq),
        actorType: "identity",
        actorId: boot.body.identity.id,
        actorMetadata: { identityId: boot.body.identity.id, name: "bench" },
        eventType: "get-secrets",
        eventMetadata: { environment: "dev", secretPath: "/", secretKey: `BENCH_${g % SECRETS}` },
        ipAddress: "10.0.0.1",
        userAgent: "node",
        userAgentType: "other",
        createdAt,
        expiresAt: null,
        prevHash: chain.hash,
      };
      chain.hash = eventHash(row);
      batch.push({ ...row, hash: chain.hash });
    }
    await db.query(
      `insert into audit_logs (id, org_id, project_id, project_name, chain_id, seq, actor_type, actor_id, actor_metadata,
         event_type, event_metadata, ip_address, user_agent, user_agent_type, created_at, expires_at, prev_hash, hash)
       select "id", "orgId", "projectId", "projectName", "chainId", "seq", "actorType", "actorId", "actorMetadata",
         "eventType", "eventMetadata", "ipAddress", "userAgent", "userAgentType", "createdAt", "expiresAt", "prevHash", "hash"
       from jsonb_to_recordset($1::jsonb) as x("id" uuid, "orgId" uuid, "projectId" uuid, "projectName" text,
         "chainId" uuid, "seq" bigint, "actorType" text, "actorId" text, "actorMetadata" jsonb, "eventType" text,
         "eventMetadata" jsonb, "ipAddress" text, "userAgent" text, "userAgentType" text, "createdAt" timestamptz,
         "expiresAt" timestamptz, "prevHash" text, "hash" text)`,
      [JSON.stringify(batch)],
    );
  }
  for (const chain of chains)
    await db.query(
      "insert into audit_log_chains (chain_id, org_id, seq, hash, pruned_seq, pruned_hash) values ($1, $2, $3, $4, 0, $5)",
      [chain.id, boot.body.organization.id, chain.seq, chain.hash, GENESIS_HASH],
    );
  await db.query("vacuum analyze");
  await db.end();
  console.log(
    `seeded ${SECRETS} secrets and ${EVENTS} audit events in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
};

try {
  await seed();
  const fromPg = join(scratch, "from-postgres.kwb");
  const fromPglite = join(scratch, "from-pglite.kwb");
  const dataDir = join(scratch, "pglite");
  const runs: [string, () => ReturnType<typeof command>, string?][] = [
    ["backup from PostgreSQL", () => command(["backup", "--out", fromPg], { DATABASE_URL: urlOf("source") }), fromPg],
    ["restore into PostgreSQL", () => command(["restore", "--in", fromPg], { DATABASE_URL: urlOf("target") })],
    ["restore into PGlite", () => command(["restore", "--in", fromPg], { DATA_DIR: dataDir })],
    ["backup from PGlite (stopped)", () => command(["backup", "--out", fromPglite], { DATA_DIR: dataDir }), fromPglite],
  ];
  console.log(`${SECRETS} secrets (+ ${SECRETS} versions), ${EVENTS} audit events`);
  for (const [name, run, file] of runs) {
    const result = await run();
    const size = file && existsSync(file) ? `, file ${(statSync(file).size / 1e6).toFixed(1)} MB` : "";
    console.log(
      `${name.padEnd(30)} ${(result.ms / 1000).toFixed(1).padStart(7)} s   peak RSS ${result.peakMb.toFixed(0).padStart(5)} MB${size}`,
    );
    console.log(`  ${result.out}`);
  }
} finally {
  await admin.end();
  pgServer.stop();
  rmSync(scratch, { recursive: true, force: true });
}
