import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createKeywardClient, type KeywardClient } from "@keyward/client";
import { beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/app/create-app";
import { buildDeps } from "../../src/app/deps";
import { createHttpServer } from "../../src/app/server";
import type { AppDeps } from "../../src/context";
import { loadEnv } from "../../src/env";
import { driveRotation } from "../../src/modules/root-keys/root-key-rotation";
import { createTestDatabaseUrl } from "../helpers/database";
import { expectOk } from "../helpers/tenant";
import { runServerCommand } from "../backup/commands";
import { startSoftHsm, type SoftHsm } from "./softhsm";

/**
 * The root keys sealed by a SoftHSM2 token, through the real start path (buildDeps): each "restart"
 * opens the same database (a PGlite directory, or one PostgreSQL database) with another configuration.
 */
let hsm: SoftHsm;
const LABEL = "keyward-root";

beforeAll(async () => {
  hsm = await startSoftHsm();
  await hsm.makeKey(LABEL);
});

type Running = { deps: AppDeps; client: (token?: string) => KeywardClient; stop: () => Promise<void> };

/** An instance over one database: a data directory of its own (PGlite) or the PostgreSQL database of `world`. */
const world = async () => embeddedWorld(mkdtempSync(join(tmpdir(), "keyward-hsm-")), await createTestDatabaseUrl());

/** As `world`, over a given data directory (and PostgreSQL database, if any). */
const embeddedWorld = (dataDir: string, databaseUrl?: string) => {
  const start = async (config: Record<string, string | undefined>): Promise<Running> => {
    const env = loadEnv({
      LOG_LEVEL: "silent",
      DATA_DIR: dataDir,
      PGLITE_SHARED_BUFFERS: "16MB",
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
      ...config,
    });
    const { deps, handle } = await buildDeps(env, {
      dataDir,
      pgliteTemplate: process.env.KEYWARD_TEST_PGLITE_TEMPLATE,
    });
    const server: Server = createHttpServer(createApp(deps), env);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return {
      deps,
      client: (token) => createKeywardClient({ baseUrl, token }),
      stop: async () => {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await handle.close();
      },
    };
  };
  /** The start's refusal (what main prints after "Keyward failed to start: "). */
  const refusal = async (config: Record<string, string | undefined>) =>
    start(config).then(
      async (running) => {
        await running.stop();
        return "started";
      },
      (error: Error) => error.message,
    );
  return { dataDir, databaseUrl, start, refusal };
};

const hsmEnv = (extra: Record<string, string> = {}) => ({
  HSM_LIB_PATH: hsm.libPath,
  HSM_PIN: hsm.pin,
  HSM_KEY_LABEL: LABEL,
  ...extra,
});

/** Sets the instance up (first start) and writes a secret; answers what reads it back. */
const seed = async (running: Running) => {
  const boot = expectOk(
    await running.client().system.bootstrap({ body: { email: "a@keyward.test", password: "p", organization: "Root" } }),
  );
  const token = boot.identity.credentials.token;
  const admin = running.client(token);
  const project = expectOk(
    await admin.projects.create({ body: { projectName: "sealed", type: "secret-manager" } }),
  ).project;
  expectOk(
    await admin.secretsV4.create({
      params: { secretName: "DB_PASSWORD" },
      body: { projectId: project.id, environment: "dev", secretPath: "/", secretValue: "hunter2" },
    }),
  );
  return {
    token,
    read: async (on: Running) =>
      expectOk(
        await on.client(token).secretsV4.get({
          params: { secretName: "DB_PASSWORD" },
          query: { projectId: project.id, environment: "dev", secretPath: "/" },
        }),
      ).secret.secretValue,
  };
};

const strategyOf = async (running: Running, token: string) =>
  expectOk(await running.client(token).rootKeys.getRootKey()).rootKey.strategy;

describe("root keys sealed by an HSM (SoftHSM2 through PKCS#11)", { timeout: 120_000 }, () => {
  it("serves, rotates and restarts with nothing that opens the root keys on disk or in the environment", async () => {
    const w = await world();
    const first = await w.start(hsmEnv());
    const s = await seed(first);
    expect(await strategyOf(first, s.token)).toBe("HSM");
    expect(existsSync(join(w.dataDir, "root.key"))).toBe(false);
    const started = await first.client(s.token).rootKeys.startRotation({ body: {} });
    expect(started.status).toBe(202);
    expect(await driveRotation(first.deps)).toBe("completed");
    await first.stop();

    const again = await w.start(hsmEnv());
    try {
      expect(await s.read(again)).toBe("hunter2");
      expect(expectOk(await again.client(s.token).rootKeys.getRootKey()).rootKey).toMatchObject({
        strategy: "HSM",
        activeVersion: 2,
      });
    } finally {
      await again.stop();
    }
    // The refusals, each one line naming what is wrong and never the PIN.
    const wrongPin = await w.refusal(hsmEnv({ HSM_PIN: "000000" }));
    expect(wrongPin).toBe("HSM: wrong PIN for the token at slot position 0 (CKR_PIN_INCORRECT)");
    expect(await w.refusal(hsmEnv({ HSM_KEY_LABEL: "no-such-key" }))).toBe(
      "HSM: no AES key labelled 'no-such-key' on the token (create it, or set HSM_GENERATE_KEY=true)",
    );
    expect(await w.refusal(hsmEnv({ HSM_SLOT: "1" }))).toMatch(/^HSM: no initialised token at slot position 1 /);
    expect(await w.refusal({ ENCRYPTION_KEY: randomBytes(32).toString("base64") })).toBe(
      "root keys are sealed by the HSM; set HSM_LIB_PATH, HSM_PIN and HSM_KEY_LABEL",
    );
    await hsm.makeKey("another-key");
    expect(await w.refusal(hsmEnv({ HSM_KEY_LABEL: "another-key" }))).toMatch(
      /^HSM: key 'another-key' does not open this database's root keys \(sealed by key fingerprint [0-9a-f]{16}\)$/,
    );
    expect(await w.refusal({ HSM_LIB_PATH: hsm.libPath, HSM_KEY_LABEL: LABEL })).toMatch(/HSM_PIN/);
  });

  it("migrates from ENCRYPTION_KEY to the HSM and back with the secrets kept", async () => {
    const w = await world();
    const oldKey = randomBytes(32).toString("base64");
    const software = await w.start({ ENCRYPTION_KEY: oldKey });
    const s = await seed(software);
    expect(await strategyOf(software, s.token)).toBe("SOFTWARE");
    await software.stop();

    // Both seals configured: switch, then start with the HSM alone.
    const both = await w.start({ ENCRYPTION_KEY: oldKey, ...hsmEnv() });
    expect(
      expectOk(await both.client(s.token).rootKeys.updateEncryptionStrategy({ body: { strategy: "HSM" } })),
    ).toMatchObject({ strategy: "HSM" });
    expect(expectOk(await both.client(s.token).rootKeys.listEncryptionStrategies()).strategies).toEqual([
      { strategy: "SOFTWARE", enabled: false },
      { strategy: "HSM", enabled: true },
    ]);
    await both.stop();
    const onHsm = await w.start(hsmEnv());
    expect(await s.read(onHsm)).toBe("hunter2");
    expect(await w.refusal({ ENCRYPTION_KEY: oldKey })).toBe(
      "root keys are sealed by the HSM; set HSM_LIB_PATH, HSM_PIN and HSM_KEY_LABEL",
    );
    // Back to software needs an ENCRYPTION_KEY on the instance: a new one, then the HSM is dropped.
    expect(
      await onHsm.client(s.token).rootKeys.updateEncryptionStrategy({ body: { strategy: "SOFTWARE" } }),
    ).toMatchObject({
      status: 400,
      body: { message: expect.stringContaining("ENCRYPTION_KEY is not set") },
    });
    await onHsm.stop();
    const newKey = randomBytes(32).toString("base64");
    const back = await w.start({ ENCRYPTION_KEY: newKey, ...hsmEnv() });
    expectOk(await back.client(s.token).rootKeys.updateEncryptionStrategy({ body: { strategy: "SOFTWARE" } }));
    await back.stop();
    const onSoftware = await w.start({ ENCRYPTION_KEY: newKey });
    try {
      expect(await s.read(onSoftware)).toBe("hunter2");
      expect(await strategyOf(onSoftware, s.token)).toBe("SOFTWARE");
    } finally {
      await onSoftware.stop();
    }
    expect(await w.refusal({ ENCRYPTION_KEY: oldKey })).toMatch(
      /^ENCRYPTION_KEY does not open this database's root keys \(sealed by key fingerprint [0-9a-f]{16}\)$/,
    );
  });

  it("backs up and restores an HSM-sealed instance with the HSM alone: the root keys travel sealed", async () => {
    const w = await world();
    const first = await w.start(hsmEnv());
    const s = await seed(first);
    await first.stop();
    const commandEnv = { ...hsmEnv(), SOFTHSM2_CONF: process.env.SOFTHSM2_CONF! };
    const file = join(mkdtempSync(join(tmpdir(), "keyward-hsm-backup-")), "sealed.kwb");
    const backup = await runServerCommand(["backup", "--out", file], {
      ...commandEnv,
      DATA_DIR: w.dataDir,
      ...(w.databaseUrl ? { DATABASE_URL: w.databaseUrl } : {}),
    });
    expect(backup.stderr).toBe("");
    expect(backup.code).toBe(0);
    // Into an embedded instance: the restore opens the carried root keys with the HSM key.
    const restoredDir = join(mkdtempSync(join(tmpdir(), "keyward-hsm-restored-")), "data");
    const withoutHsm = await runServerCommand(["restore", "--in", file], {
      DATA_DIR: restoredDir,
      ENCRYPTION_KEY: randomBytes(32).toString("base64"),
    });
    expect(withoutHsm.code).toBe(1);
    expect(withoutHsm.stderr.trim()).toBe(
      "restore refused: root keys are sealed by the HSM; set HSM_LIB_PATH, HSM_PIN and HSM_KEY_LABEL",
    );
    const restored = await runServerCommand(["restore", "--in", file], { ...commandEnv, DATA_DIR: restoredDir });
    expect(restored.stderr).toBe("");
    expect(restored.stdout).toMatch(
      /^restored .*: \d+ rows in \d+ tables; [1-9]\d* data keys, [1-9]\d* sealed secret values and \d+ other sealed values opened/,
    );
    const embedded = await embeddedWorld(restoredDir).start(hsmEnv());
    try {
      expect(await s.read(embedded)).toBe("hunter2");
    } finally {
      await embedded.stop();
    }
  });

  it("replaces the seal key itself at start: ENCRYPTION_KEY_PREVIOUS, then HSM_KEY_LABEL_PREVIOUS", async () => {
    const w = await world();
    const keyA = randomBytes(32).toString("base64");
    const keyB = randomBytes(32).toString("base64");
    const first = await w.start({ ENCRYPTION_KEY: keyA });
    const s = await seed(first);
    await first.stop();
    const replaced = await w.start({ ENCRYPTION_KEY: keyB, ENCRYPTION_KEY_PREVIOUS: keyA });
    expect(await s.read(replaced)).toBe("hunter2");
    await replaced.stop();
    expect(await w.refusal({ ENCRYPTION_KEY: keyA })).toMatch(
      /^ENCRYPTION_KEY does not open this database's root keys/,
    );
    const onB = await w.start({ ENCRYPTION_KEY: keyB });
    expect(await s.read(onB)).toBe("hunter2");
    // Onto the HSM, then from one HSM key to another.
    await onB.stop();
    const both = await w.start({ ENCRYPTION_KEY: keyB, ...hsmEnv() });
    expectOk(await both.client(s.token).rootKeys.updateEncryptionStrategy({ body: { strategy: "HSM" } }));
    await both.stop();
    await hsm.makeKey("next-root");
    const rekeyed = await w.start(hsmEnv({ HSM_KEY_LABEL: "next-root", HSM_KEY_LABEL_PREVIOUS: LABEL }));
    expect(await s.read(rekeyed)).toBe("hunter2");
    await rekeyed.stop();
    expect(await w.refusal(hsmEnv())).toMatch(/^HSM: key 'keyward-root' does not open this database's root keys/);
    const onNext = await w.start(hsmEnv({ HSM_KEY_LABEL: "next-root" }));
    try {
      expect(await s.read(onNext)).toBe("hunter2");
    } finally {
      await onNext.stop();
    }
  });

  it("stops the start with one line naming a wrong PIN, and answers 503 only where the HSM is needed when it fails", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "keyward-hsm-start-"));
    const started = await runServerCommand([], {
      ...hsmEnv({ HSM_PIN: "99999999" }),
      SOFTHSM2_CONF: process.env.SOFTHSM2_CONF!,
      DATA_DIR: dataDir,
      PORT: "0",
    });
    expect(started.code).toBe(1);
    expect(started.stderr.trim()).toBe(
      "Keyward failed to start: HSM: wrong PIN for the token at slot position 0 (CKR_PIN_INCORRECT)",
    );
    expect(started.stderr).not.toContain("99999999");
    expect(existsSync(join(dataDir, "root.key"))).toBe(false);

    const w = await world();
    const running = await w.start(hsmEnv());
    try {
      const s = await seed(running);
      // The token drops every session of this process: reads and writes go on, a rotation answers 503.
      await hsm.dropSessions();
      const rotation = await running.client(s.token).rootKeys.startRotation({ body: {} });
      expect(rotation).toMatchObject({ status: 503, body: { error: "ServiceUnavailable" } });
      expect(rotation.headers.get("retry-after")).toBeTruthy();
      expect(await s.read(running)).toBe("hunter2");
      // The next attempt opens a new session.
      expect((await running.client(s.token).rootKeys.startRotation({ body: {} })).status).toBe(202);
    } finally {
      await running.stop();
    }
  });
});
