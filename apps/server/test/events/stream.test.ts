import { beforeAll, describe, expect, it } from "vitest";
import { deleteEventsBefore } from "../../src/modules/events/secret-events.repository";
import { eventData, isEvent } from "../helpers/event-stream";
import { createFolder, insertCustomRole } from "../helpers/structure";
import { createIdentity, createProject, createTenant, expectOk, type Tenant } from "../helpers/tenant";
import { withTrigger } from "../helpers/triggers";
import { on, trackedStreams, writeSecret } from "./subscriptions";

let tenant: Tenant;
let projectId: string;
const open = trackedStreams();

const subscribe = (token: string, register: unknown, headers: Record<string, string> = {}, project = projectId) =>
  open(tenant, token, { projectId: project, register }, headers);

const write = (secretPath: string, key: string, value?: string) =>
  writeSecret(tenant, projectId, { environment: "dev", secretPath }, key, value);

beforeAll(async () => {
  tenant = await createTenant();
  projectId = (await createProject(tenant)).id;
  await createFolder(tenant, projectId, "dev", "/", "app");
  await createFolder(tenant, projectId, "dev", "/app", "sub");
  await createFolder(tenant, projectId, "dev", "/", "other");
  await createFolder(tenant, projectId, "dev", "/", "imp");
});

describe("POST /api/v1/events/subscribe/project-events", () => {
  it("streams create, update and delete of the folder's secrets, names only, with increasing ids", async () => {
    const stream = await subscribe(tenant.adminToken, on("/app"));
    expect(stream.status).toBe(200);
    expectOk(await write("/app", "DB_URL", "postgres://canary-in-value"));
    expectOk(
      await tenant.admin.secretsV4.update({
        params: { secretName: "DB_URL" },
        body: { projectId, environment: "dev", secretPath: "/app", secretValue: "canary-updated-value" },
      }),
    );
    expectOk(
      await tenant.admin.secretsV4.delete({
        params: { secretName: "DB_URL" },
        body: { projectId, environment: "dev", secretPath: "/app" },
      }),
    );
    const created = await stream.next(isEvent);
    const updated = await stream.next(isEvent);
    const deleted = await stream.next(isEvent);
    expect([created.event, updated.event, deleted.event]).toEqual(["secret:create", "secret:update", "secret:delete"]);
    expect(Number(updated.id)).toBe(Number(created.id) + 1);
    expect(Number(deleted.id)).toBe(Number(updated.id) + 1);
    expect(eventData(created)).toEqual({
      type: "secret-manager",
      projectType: "secret-manager",
      data: {
        eventType: "secret:create",
        payload: [{ environment: "dev", secretPath: "/app", secretKeys: "DB_URL", secretKey: "DB_URL" }],
      },
    });
    expect(stream.raw()).not.toContain("canary");
  });

  it("a path with /** follows the folder and below; a subscriber of /app sees nothing of /other", async () => {
    const recursive = await subscribe(tenant.adminToken, on("/app/**"));
    const app = await subscribe(tenant.adminToken, on("/app"));
    expectOk(await write("/other", "ELSEWHERE"));
    expectOk(await write("/app/sub", "BELOW"));
    const below = await recursive.next(isEvent);
    expect(eventData(below).data.payload).toEqual([
      { environment: "dev", secretPath: "/app/sub", secretKeys: "BELOW", secretKey: "BELOW" },
    ]);
    expect((await app.next(isEvent)).data).toContain("BELOW");
    expect(recursive.raw() + app.raw()).not.toContain("ELSEWHERE");
  });

  it("a batch is one event listing every key", async () => {
    const stream = await subscribe(tenant.adminToken, on("/app"));
    expectOk(
      await tenant.admin.secretsV4.batchCreate({
        body: {
          projectId,
          environment: "dev",
          secretPath: "/app",
          secrets: [
            { secretKey: "BATCH_A", secretValue: "a" },
            { secretKey: "BATCH_B", secretValue: "b" },
          ],
        },
      }),
    );
    const event = await stream.next(isEvent);
    expect((eventData(event).data.payload as { secretKey: string }[]).map((p) => p.secretKey)).toEqual([
      "BATCH_A",
      "BATCH_B",
    ]);
  });

  it("a folder importing the changed one gets an import mutation, as does a change of its imports", async () => {
    expectOk(
      await tenant.admin.secretImports.create({
        body: {
          workspaceId: projectId,
          environment: "dev",
          path: "/imp",
          import: { environment: "dev", path: "/other" },
        },
      }),
    );
    const stream = await subscribe(tenant.adminToken, [
      { event: "secret:import-mutation", conditions: { environmentSlug: "dev", secretPath: "/imp" } },
    ]);
    expectOk(await write("/other", "IMPORTED"));
    const event = await stream.next(isEvent);
    expect(event.event).toBe("secret:import-mutation");
    expect(eventData(event).data.payload).toEqual({ environment: "dev", secretPath: "/imp" });
  });

  it("a subscriber sees only the secrets it may describe; the others' names never reach it", async () => {
    const role = await insertCustomRole(tenant, projectId, [
      { subject: "secret-events", inverted: false, action: ["subscribe-on-created"] },
      {
        subject: "secrets",
        inverted: false,
        action: ["describeSecret"],
        conditions: { secretName: { $glob: "VISIBLE_*" } },
      },
    ]);
    const limited = await createIdentity(tenant, { projectId, projectRole: role });
    const stream = await subscribe(limited.token, [
      { event: "secret:create", conditions: { environmentSlug: "dev", secretPath: "/app" } },
    ]);
    expect(stream.status).toBe(200);
    expectOk(await write("/app", "HIDDEN_NAME_1"));
    expectOk(await write("/app", "VISIBLE_ONE"));
    const event = await stream.next(isEvent);
    expect(eventData(event).data.payload).toEqual([
      { environment: "dev", secretPath: "/app", secretKeys: "VISIBLE_ONE", secretKey: "VISIBLE_ONE" },
    ]);
    expect(stream.raw()).not.toContain("HIDDEN_NAME_1");
  });

  it("403 without the subscribe right where a registration listens, 404 for another organization's project", async () => {
    const role = await insertCustomRole(tenant, projectId, [
      {
        subject: "secret-events",
        inverted: false,
        action: ["subscribe-on-created"],
        conditions: { secretPath: { $glob: "/app/**" } },
      },
      { subject: "secrets", inverted: false, action: ["describeSecret"] },
    ]);
    const limited = await createIdentity(tenant, { projectId, projectRole: role });
    const elsewhere = await subscribe(limited.token, [
      { event: "secret:create", conditions: { environmentSlug: "dev", secretPath: "/other" } },
    ]);
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.error?.error).toBe("PermissionDenied");
    const otherKind = await subscribe(limited.token, [
      { event: "secret:delete", conditions: { environmentSlug: "dev", secretPath: "/app" } },
    ]);
    expect(otherKind.status).toBe(403);
    const noAccess = await createIdentity(tenant, { projectId, projectRole: "no-access" });
    expect((await subscribe(noAccess.token, on("/app"))).status).toBe(403);

    const stranger = await createTenant(tenant.app);
    const foreign = await subscribe(stranger.adminToken, on("/app"));
    expect(foreign.status).toBe(404);
  });

  it("422 for a malformed body, 401 without a token", async () => {
    expect((await subscribe(tenant.adminToken, [])).status).toBe(422);
    expect((await subscribe(tenant.adminToken, [{ event: "secret:rename" }])).status).toBe(422);
    expect((await subscribe(tenant.adminToken, Array(11).fill({ event: "secret:create" }))).status).toBe(422);
    expect(
      (
        await subscribe(tenant.adminToken, [
          { event: "secret:create", conditions: { environmentSlug: "dev", secretPath: "/a b" } },
        ])
      ).status,
    ).toBe(422);
    const anonymous = await fetch(`${tenant.app.baseUrl}/api/v1/events/subscribe/project-events`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ projectId, register: on("/app") }),
    });
    expect(anonymous.status).toBe(401);
  });

  it("a change that rolls back publishes nothing and takes no event number", async () => {
    const stream = await subscribe(tenant.adminToken, on("/app"));
    expectOk(await write("/app", "BEFORE_ROLLBACK"));
    const before = await stream.next(isEvent);
    // The audit event is the last write of a change: failing it rolls the whole change back.
    const drop = await withTrigger(
      tenant.app.deps.db,
      "audit_logs",
      "before insert",
      "if new.event_type = 'create-secret' and new.metadata->>'secretKey' is null and new.metadata::text like '%ROLLED_BACK%' then raise exception 'refused'; end if; return new;",
    );
    try {
      const refused = await write("/app", "ROLLED_BACK");
      expect(refused.status).toBe(500);
    } finally {
      await drop();
    }
    expectOk(await write("/app", "AFTER_ROLLBACK"));
    const after = await stream.next(isEvent);
    expect(after.data).toContain("AFTER_ROLLBACK");
    expect(Number(after.id)).toBe(Number(before.id) + 1);
    expect(stream.raw()).not.toContain("ROLLED_BACK");
  });

  it("a client reconnecting with Last-Event-ID gets what it missed, in order; past the window it is told to resync", async () => {
    const first = await subscribe(tenant.adminToken, on("/app"));
    expectOk(await write("/app", "SEEN"));
    const seen = await first.next(isEvent);
    first.close();
    expectOk(await write("/app", "MISSED_1"));
    expectOk(await write("/app", "MISSED_2"));
    const again = await subscribe(tenant.adminToken, on("/app"), { "last-event-id": seen.id! });
    const one = await again.next(isEvent);
    const two = await again.next(isEvent);
    expect([one.data, two.data].map((d) => eventData({ data: d }).data.payload)).toEqual([
      [{ environment: "dev", secretPath: "/app", secretKeys: "MISSED_1", secretKey: "MISSED_1" }],
      [{ environment: "dev", secretPath: "/app", secretKeys: "MISSED_2", secretKey: "MISSED_2" }],
    ]);
    expect(Number(two.id)).toBe(Number(one.id) + 1);
    // Live events follow the replay without a gap or a repeat.
    expectOk(await write("/app", "LIVE"));
    const live = await again.next(isEvent);
    expect(Number(live.id)).toBe(Number(two.id) + 1);

    await deleteEventsBefore(tenant.app.deps.db, new Date(Date.now() + 60_000));
    const late = await subscribe(tenant.adminToken, on("/app"), { "last-event-id": seen.id! });
    const resync = await late.next(isEvent);
    expect(resync.event).toBe("resync");
    expect(Number(resync.id)).toBe(Number(live.id));
    const unknown = await subscribe(tenant.adminToken, on("/app"), { "last-event-id": "not-a-number" });
    expect((await unknown.next(isEvent)).event).toBe("resync");
  });

  it("answers 429 past the streams one caller may hold", async () => {
    const caller = await createIdentity(tenant, { projectId, projectRole: "member" });
    const limit = tenant.app.deps.env.EVENTS_MAX_STREAMS_PER_ACTOR;
    const held = [];
    for (let i = 0; i < limit; i += 1) held.push(await subscribe(caller.token, on("/app")));
    expect(held.map((stream) => stream.status)).toEqual(held.map(() => 200));
    const refused = await subscribe(caller.token, on("/app"));
    expect(refused.status).toBe(429);
    expect(refused.error?.message).toMatch(/Too many active event streams/);
    // A stream that ends frees its place.
    held.at(-1)!.close();
    await expect.poll(async () => (await subscribe(caller.token, on("/app"))).status, { timeout: 5_000 }).toBe(200);
  });
});
