import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnKeyward, stopKeyward, type Spawned } from "../runtime/spawn";
import {
  newKey,
  readAsIdentity,
  runServerCommand,
  seedInstance,
  verifyAudit,
  type CommandResult,
  type Seeded,
} from "./commands";

const key = newKey();
const dir = mkdtempSync(join(tmpdir(), "keyward-backup-"));
const sourceDir = join(dir, "source");
const backupFile = join(dir, "instance.kwb");
let source: Spawned;
let seeded: Seeded;

beforeAll(async () => {
  source = await spawnKeyward({ DATA_DIR: sourceDir, ENCRYPTION_KEY: key });
  seeded = await seedInstance(source);
  // The root key is rotated first: the backup carries data keys under version 2, and the restore opens them.
  const admin = source.client(source.rootToken);
  const started = await admin.rootKeys.startRotation({ body: {} });
  if (started.status !== 202) throw new Error(`rotation refused: ${JSON.stringify(started.body)}`);
  for (let attempt = 0; ; attempt += 1) {
    const seen = await admin.rootKeys.getRotation({ params: { rotationId: started.body.rotation.id } });
    if (seen.status === 200 && seen.body.rotation.status === "completed") break;
    if (attempt > 200) throw new Error(`the rotation did not complete: ${JSON.stringify(seen.body)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}, 60_000);

afterAll(async () => {
  if (source) await stopKeyward(source);
  rmSync(dir, { recursive: true, force: true });
});

const restore = (file: string, dataDir: string, encryptionKey = key) =>
  runServerCommand(["restore", "--in", file], { DATA_DIR: dataDir, ENCRYPTION_KEY: encryptionKey });

/** A refusal: a non-zero exit and exactly one line on stderr, no stack trace. */
const expectRefusal = (result: CommandResult, pattern: RegExp) => {
  expect(result.code, result.stderr).not.toBe(0);
  const lines = result.stderr.trimEnd().split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(pattern);
  expect(result.stderr).not.toMatch(/\n\s+at /);
};

describe("backup and restore of an embedded (PGlite) instance", { timeout: 120_000 }, () => {
  it("backs up the serving instance through its control socket while requests keep being answered", async () => {
    expect(statSync(join(sourceDir, "keyward.sock")).mode & 0o777).toBe(0o600);
    const admin = source.client(source.rootToken);
    const statuses: number[] = [];
    let stop = false;
    const load = (async () => {
      for (let n = 0; !stop; n += 1) {
        const where = { projectId: seeded.projectId, environment: "dev", secretPath: "/" };
        const res =
          n % 2 === 0
            ? await admin.secretsV4.create({
                params: { secretName: `LOAD_${n}` },
                body: { ...where, secretValue: "x" },
              })
            : await admin.secretsV4.list({ query: where });
        statuses.push(res.status);
      }
    })();
    const result = await runServerCommand(["backup", "--out", backupFile], {
      DATA_DIR: sourceDir,
      ENCRYPTION_KEY: key,
    });
    stop = true;
    await load;
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^backup written to .*instance\.kwb: \d+ rows in \d+ tables \(pglite, migration \d{4}-/,
    );
    expect(statuses.length).toBeGreaterThan(0);
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    expect(statSync(backupFile).mode & 0o777).toBe(0o600);
    expect(existsSync(`${backupFile}.partial`)).toBe(false);
    // Nothing readable without the key: no table name, no key of a secret, no value.
    const bytes = readFileSync(backupFile);
    for (const clear of ["secret_versions", "audit_logs", "KEY_1", seeded.secrets.KEY_1!])
      expect(bytes.includes(Buffer.from(clear)), clear).toBe(false);
    // A backup never replaces a file.
    const again = await runServerCommand(["backup", "--out", backupFile], { DATA_DIR: sourceDir, ENCRYPTION_KEY: key });
    expectRefusal(again, /^backup refused: .*instance\.kwb exists/);
    expect(readFileSync(backupFile).equals(bytes)).toBe(true);
  });

  it("restores into a fresh DATA_DIR: the same credentials log in, the values read back, the audit log verifies", async () => {
    const target = join(dir, "restored");
    const result = await restore(backupFile, target);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^restored .*: \d+ rows in \d+ tables; [1-9]\d* data keys, [1-9]\d* sealed secret values and [1-9]\d* other sealed values opened; [1-9]\d* audit events in [1-9]\d* chains verified/,
    );
    const restored = await spawnKeyward({ DATA_DIR: target, ENCRYPTION_KEY: key }, { bootstrap: false });
    try {
      expect(await readAsIdentity(restored, seeded)).toMatchObject(seeded.secrets);
      const audit = await verifyAudit(restored, source.rootToken);
      expect(audit).toMatchObject({ valid: true });
      expect(audit.checked).toBeGreaterThan(0);
    } finally {
      await stopKeyward(restored);
    }
    // A restored directory is not empty.
    expectRefusal(await restore(backupFile, target), /^restore refused: DATA_DIR .* is not empty \(it holds pgdata\)/);
  });

  it("refuses another key with one line naming ENCRYPTION_KEY and the key check, and no key at all", async () => {
    const target = join(dir, "other-key");
    const [otherKey, noKey] = await Promise.all([
      restore(backupFile, target, newKey()),
      runServerCommand(["restore", "--in", backupFile], { DATA_DIR: target }),
    ]);
    expectRefusal(
      otherKey,
      /^restore refused: .* sealed under a different ENCRYPTION_KEY \(key check does not match\); set ENCRYPTION_KEY to the source instance's key$/,
    );
    expectRefusal(noKey, /set ENCRYPTION_KEY to the source instance's key/);
    expect(existsSync(target)).toBe(false);
  });

  it("refuses a truncated file and a file with one byte changed, leaving the target as it was", async () => {
    const bytes = readFileSync(backupFile);
    const truncated = join(dir, "truncated.kwb");
    writeFileSync(truncated, bytes.subarray(0, Math.floor(bytes.length * 0.6)));
    const changed = join(dir, "changed.kwb");
    const flipped = Buffer.from(bytes);
    flipped[Math.floor(bytes.length / 2)]! ^= 0x01;
    writeFileSync(changed, flipped);
    // A DATA_DIR holding only the source's root.key is empty; it stays as it was.
    const withKey = join(dir, "with-root-key");
    mkdirSync(withKey);
    writeFileSync(join(withKey, "root.key"), key);
    const [cut, altered, alteredIntoKeyDir] = await Promise.all([
      restore(truncated, join(dir, "damaged-1")),
      restore(changed, join(dir, "damaged-2")),
      runServerCommand(["restore", "--in", changed], { DATA_DIR: withKey }),
    ]);
    expectRefusal(cut, /^restore refused: .*truncated\.kwb is truncated/);
    expectRefusal(altered, /^restore refused: .*changed\.kwb is damaged \(chunk \d+ does not authenticate\)/);
    expectRefusal(alteredIntoKeyDir, /is damaged/);
    expect(existsSync(join(dir, "damaged-1"))).toBe(false);
    expect(existsSync(join(dir, "damaged-2"))).toBe(false);
    expect(readFileSync(join(withKey, "root.key"), "utf8")).toBe(key);
    expect(existsSync(join(withKey, "pgdata"))).toBe(false);
  });

  it("refuses a DATA_DIR holding anything but root.key, and an unknown argument with the usage and exit 2", async () => {
    const target = join(dir, "occupied");
    mkdirSync(target);
    writeFileSync(join(target, "notes.txt"), "mine");
    expectRefusal(
      await restore(backupFile, target),
      /^restore refused: DATA_DIR .* is not empty \(it holds notes\.txt\)/,
    );
    expect(readFileSync(join(target, "notes.txt"), "utf8")).toBe("mine");
    const wrong = [["bakup", "--out", "x"], ["backup"], ["restore", "--out", backupFile]];
    for (const result of await Promise.all(wrong.map((args) => runServerCommand(args, { DATA_DIR: target })))) {
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/^usage: .*backup --out FILE.*restore --in FILE.*\n$/);
    }
  });
});
