import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import { createKeywardClient } from "@keyward/client";
import { createApp } from "../../src/app/create-app";
import { buildDeps } from "../../src/app/deps";
import { startJobs } from "../../src/app/jobs";
import { createHttpServer } from "../../src/app/server";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppDeps } from "../../src/context";
import { driveRotation } from "../../src/modules/root-keys/root-key-rotation";
import { SEALED_TABLES } from "../../src/modules/root-keys/sealed-columns";
import { startTestApp, type TestApp } from "../helpers/app";
import { createProject, createTenant, expectOk, type Tenant } from "../helpers/tenant";
import { sshKeygen, sshWorld } from "../ssh/helpers";

let app: TestApp;
let tenant: Tenant;

beforeAll(async () => {
  // Batches of 2: a handful of rows already takes several batches, so readers and writers meet it mid-way.
  app = await startTestApp({ ROOT_KEY_REWRAP_BATCH_SIZE: "2" });
  tenant = await createTenant(app);
});
afterAll(() => app?.close());

const root = () => app.client(app.rootToken);

const writeSecret = async (projectId: string, key: string, value: string) =>
  expectOk(
    await tenant.admin.secretsV4.create({
      params: { secretName: key },
      body: { projectId, environment: "dev", secretPath: "/", secretValue: value },
    }),
  );

const readSecret = async (projectId: string, key: string) =>
  expectOk(
    await tenant.admin.secretsV4.get({
      params: { secretName: key },
      query: { projectId, environment: "dev", secretPath: "/" },
    }),
  ).secret.secretValue;

/** Registered root-sealed values (per column) still under a version other than `version`. */
const leftBehind = async (deps: AppDeps, version: number) => {
  const found: string[] = [];
  for (const entry of SEALED_TABLES)
    for (const column of entry.columns) {
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(entry.table)}
        where ${sql.ref(column.name)} like 'v1:%'
          or (${sql.ref(column.name)} like 'v2:%' and ${sql.ref(column.name)} not like ${`v2:${version}:%`})`.execute(
        deps.db,
      );
      if (rows[0]!.n > 0) found.push(`${entry.table}.${column.name}: ${rows[0]!.n}`);
    }
  return found;
};

/** Another process's view of the same app: its own lease name, and a clock `aheadMs` in the future. */
const otherInstance = (deps: AppDeps, aheadMs = 0): AppDeps => ({
  ...deps,
  clock: { now: () => Date.now() + aheadMs },
  rootKeys: { ...deps.rootKeys, instanceId: randomUUID() },
});

describe("the root key's status and who may see it", () => {
  it("answers the versions, the seal and the latest rotation to instance admins only", async () => {
    const status = expectOk(await root().rootKeys.getRootKey());
    expect(status.rootKey).toMatchObject({ strategy: "SOFTWARE", versions: [expect.objectContaining({ version: 1 })] });
    expect(expectOk(await root().rootKeys.listEncryptionStrategies()).strategies).toEqual([
      { strategy: "SOFTWARE", enabled: true },
      { strategy: "HSM", enabled: false },
    ]);
    for (const call of [
      () => tenant.admin.rootKeys.getRootKey(),
      () => tenant.admin.rootKeys.startRotation({ body: {} }),
      () => tenant.admin.rootKeys.getRotation({ params: { rotationId: randomUUID() } }),
      () => tenant.admin.rootKeys.listEncryptionStrategies(),
      () => tenant.admin.rootKeys.updateEncryptionStrategy({ body: { strategy: "SOFTWARE" } }),
    ]) {
      expect(await call()).toMatchObject({
        status: 403,
        body: { error: "ForbiddenError", message: "Only instance admins can manage the root key" },
      });
    }
    expect((await tenant.anonymous.rootKeys.getRootKey()).status).toBe(401);
    expect((await tenant.anonymous.rootKeys.startRotation({ body: {} })).status).toBe(401);
  });

  it("answers 404 for a rotation that does not exist and 400 for a seal this instance lacks", async () => {
    expect(await root().rootKeys.getRotation({ params: { rotationId: randomUUID() } })).toMatchObject({
      status: 404,
      body: { error: "NotFound" },
    });
    expect(await root().rootKeys.updateEncryptionStrategy({ body: { strategy: "HSM" } })).toMatchObject({
      status: 400,
      body: { message: expect.stringContaining("HSM_LIB_PATH") },
    });
    expect((await root().rootKeys.updateEncryptionStrategy({ body: { strategy: "CLOUD" as "HSM" } })).status).toBe(422);
  });
});

describe("an online rotation", () => {
  it("re-wraps everything under the new version while reads and writes go on, then retires the old one", async () => {
    const projects = await Promise.all(Array.from({ length: 4 }, () => createProject(tenant)));
    for (const [i, project] of projects.entries()) await writeSecret(project.id, "BEFORE", `value-${i}`);
    const { ca, template } = await sshWorld(tenant);
    const before = expectOk(await root().rootKeys.getRootKey()).rootKey.activeVersion;

    const started = await root().rootKeys.startRotation({ body: {} });
    expect(started.status).toBe(202);
    if (started.status !== 202) return;
    const { rotation } = started.body;
    expect(rotation).toMatchObject({ status: "running", fromVersion: before, toVersion: before + 1, rewrapped: 0 });
    expect(rotation.total).toBeGreaterThanOrEqual(projects.length + 1);
    expect(await root().rootKeys.startRotation({ body: {} })).toMatchObject({
      status: 409,
      body: { error: "Conflict" },
    });
    expect((await root().rootKeys.updateEncryptionStrategy({ body: { strategy: "SOFTWARE" } })).status).toBe(409);

    // Readers and writers run while the job re-wraps two rows per batch.
    let stop = false;
    const errors: unknown[] = [];
    const traffic = (async () => {
      for (let round = 0; !stop; round += 1) {
        try {
          for (const [i, project] of projects.entries())
            expect(await readSecret(project.id, "BEFORE")).toBe(`value-${i}`);
          const fresh = await createProject(tenant);
          await writeSecret(fresh.id, "DURING", `during-${round}`);
          expect(await readSecret(fresh.id, "DURING")).toBe(`during-${round}`);
        } catch (error) {
          errors.push(error);
        }
      }
    })();
    const outcome = await driveRotation(app.deps);
    stop = true;
    await traffic;
    expect(errors).toEqual([]);
    expect(outcome).toBe("completed");

    const done = expectOk(await root().rootKeys.getRotation({ params: { rotationId: rotation.id } })).rotation;
    expect(done).toMatchObject({ status: "completed", error: null });
    expect(done.rewrapped).toBe(done.total);
    const status = expectOk(await root().rootKeys.getRootKey()).rootKey;
    expect(status.activeVersion).toBe(before + 1);
    expect(status.versions.find((v) => v.version === before)).toMatchObject({ state: "retired" });
    expect(status.rotation?.id).toBe(rotation.id);
    expect(await leftBehind(app.deps, before + 1)).toEqual([]);
    const { rows } = await sql<{
      sealed: string | null;
    }>`select sealed from root_keys where version = ${before}`.execute(app.deps.db);
    expect(rows[0]!.sealed).toBeNull();
    expect(app.deps.rootKeys.keyring.has(before)).toBe(false);
    const { auditLogs } = expectOk(
      await root().auditLogs.list({ query: { eventType: "complete-root-key-rotation", limit: 5 } }),
    );
    expect(auditLogs.find((event) => event.event.metadata.rotationId === rotation.id)).toMatchObject({
      orgId: app.bootstrap.organization.id,
      actor: { type: "platform" },
      event: { metadata: { fromVersion: before, toVersion: before + 1, rewrapped: done.total } },
    });

    // Everything sealed before reads back: data keys, the SSH CA's private key, new writes.
    for (const [i, project] of projects.entries()) expect(await readSecret(project.id, "BEFORE")).toBe(`value-${i}`);
    const key = sshKeygen();
    const signed = await tenant.admin.ssh.sign({
      body: { certificateTemplateId: template.id, publicKey: key.publicKey, certType: "user", principals: ["deploy"] },
    });
    expect(signed.status, JSON.stringify(signed.body)).toBe(200);
    expect(ca.id).toBeTruthy();
    const later = await createProject(tenant);
    await writeSecret(later.id, "AFTER", "after");
    expect(await readSecret(later.id, "AFTER")).toBe("after");
  });

  it("never lets a value be written under a retired version", async () => {
    const retired = expectOk(await root().rootKeys.getRootKey()).rootKey.versions.find((v) => v.state === "retired");
    expect(retired).toBeDefined();
    const write = sql`insert into instance_secrets (name, sealed) values (${`probe-${randomUUID()}`}, ${`v2:${retired!.version}:AAAA`})`;
    await expect(write.execute(app.deps.db)).rejects.toMatchObject({ code: "55KW1" });
  });

  it("answers 503 with Retry-After for a value under a version this process has not loaded", async () => {
    const { ca, template } = await sshWorld(tenant);
    await sql`update ssh_cas set encrypted_private_key = 'v2:77:AAAA' where id = ${ca.id}`.execute(app.deps.db);
    const key = sshKeygen();
    const res = await tenant.admin.ssh.sign({
      body: { certificateTemplateId: template.id, publicKey: key.publicKey, certType: "user", principals: ["deploy"] },
    });
    expect(res).toMatchObject({ status: 503, body: { error: "ServiceUnavailable" } });
    expect(res.headers.get("retry-after")).toBe("2");
    // A value no key opens would stop every later rotation (it names the row): the CA goes.
    await sql`delete from ssh_cas where id = ${ca.id}`.execute(app.deps.db);
  });

  it("is resumed by another instance when the one that ran it stops half-way", async () => {
    for (let i = 0; i < 6; i += 1) await writeSecret((await createProject(tenant)).id, "K", `v${i}`);
    const started = await root().rootKeys.startRotation({ body: {} });
    if (started.status !== 202) throw new Error(JSON.stringify(started.body));
    const { rotation } = started.body;
    // The first instance claims it and does three batches, then is gone (its lease still holds).
    const crashed = otherInstance(app.deps);
    expect(await driveRotation(crashed, { maxBatches: 3 })).toBe("busy");
    const halfway = expectOk(await root().rootKeys.getRotation({ params: { rotationId: rotation.id } })).rotation;
    expect(halfway.status).toBe("running");
    expect(halfway.rewrapped).toBeGreaterThan(0);
    expect(halfway.rewrapped).toBeLessThan(halfway.total);
    // Another instance cannot take it while the lease lasts, and does once it has lapsed.
    expect(await driveRotation(otherInstance(app.deps))).toBe("busy");
    expect(await driveRotation(otherInstance(app.deps, 60_000))).toBe("completed");
    const done = expectOk(await root().rootKeys.getRotation({ params: { rotationId: rotation.id } })).rotation;
    expect(done).toMatchObject({ status: "completed", rewrapped: done.total });
    expect(await leftBehind(app.deps, rotation.toVersion)).toEqual([]);
  });
});

describe.skipIf(!process.env.DATABASE_URL)("a rotation across two instances of one PostgreSQL", () => {
  it("is heard by the other instance, which reads what the first wrote and writes what it reads, with no error", async () => {
    const { deps: otherDeps, handle } = await buildDeps(app.deps.env, { dataDir: "memory://" });
    const server = createHttpServer(createApp(otherDeps), app.deps.env);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const other = createKeywardClient({
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      token: tenant.adminToken,
    });
    const stopJobs = [startJobs(app.deps, ["root-keys"]), startJobs(otherDeps, ["root-keys"])];
    try {
      const where = (projectId: string) => ({ projectId, environment: "dev", secretPath: "/" });
      const started = await root().rootKeys.startRotation({ body: {} });
      if (started.status !== 202) throw new Error(JSON.stringify(started.body));
      const errors: string[] = [];
      let round = 0;
      for (;;) {
        const status = expectOk(await root().rootKeys.getRotation({ params: { rotationId: started.body.rotation.id } }))
          .rotation.status;
        // Each round: a project and a secret made on one instance, read on the other, both ways.
        const [writer, reader] = round % 2 === 0 ? [tenant.admin, other] : [other, tenant.admin];
        const project = await writer.projects.create({
          body: { projectName: `both-${round}`, type: "secret-manager" },
        });
        if (project.status !== 200) errors.push(`create project: ${project.status}`);
        else {
          const id = project.body.project.id;
          const wrote = await writer.secretsV4.create({
            params: { secretName: "K" },
            body: { ...where(id), secretValue: `v${round}` },
          });
          const read = await reader.secretsV4.get({ params: { secretName: "K" }, query: where(id) });
          if (wrote.status !== 200 || read.status !== 200 || read.body.secret.secretValue !== `v${round}`)
            errors.push(`round ${round}: ${wrote.status} ${read.status}`);
        }
        round += 1;
        if (status === "completed" || round > 400) break;
      }
      expect(errors).toEqual([]);
      expect(round).toBeLessThan(400);
      const to = started.body.rotation.toVersion;
      expect(otherDeps.rootKeys.keyring.activeVersion).toBe(to);
      expect(await leftBehind(app.deps, to)).toEqual([]);
    } finally {
      for (const stop of stopJobs) await stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await handle.close();
    }
  });
});
