import { beforeAll, describe, expect, it } from "vitest";
import { eventData, isEvent, type Frame, type OpenedStream } from "../helpers/event-stream";
import { createFolder, insertCustomRole } from "../helpers/structure";
import { createIdentity, createProject, createTenant, expectOk, type Tenant } from "../helpers/tenant";
import { on, trackedStreams, writeSecret } from "./subscriptions";

/**
 * The shapes of subscription the `infisical proxy` versions send: `{projectId}` alone, registrations
 * without `event` (with their conditions nested or flat), and the full shape.
 */
let tenant: Tenant;
let projectId: string;
const open = trackedStreams();

const subscribe = (token: string, register?: unknown, project = projectId) =>
  open(tenant, token, register === undefined ? { projectId: project } : { projectId: project, register });

const write = (environment: string, secretPath: string, key: string) =>
  writeSecret(tenant, projectId, { environment, secretPath }, key);

/** Each event a stream got, as "type env path [keys]", up to and including the one naming `last`. */
const eventsUntil = async (stream: OpenedStream, last: string) => {
  await stream.next((frame) => isEvent(frame) && (frame.data ?? "").includes(`"${last}"`));
  return stream.frames.filter(isEvent).map(describeEvent);
};

const describeEvent = (frame: Frame) => {
  const { payload } = eventData(frame).data;
  if (!Array.isArray(payload)) {
    const place = payload as { environment: string; secretPath: string };
    return `${frame.event} ${place.environment} ${place.secretPath}`;
  }
  const keys = payload as { environment: string; secretPath: string; secretKey: string }[];
  return `${frame.event} ${keys[0]!.environment} ${keys[0]!.secretPath} ${keys.map((k) => k.secretKey).join(",")}`;
};

beforeAll(async () => {
  tenant = await createTenant();
  projectId = (await createProject(tenant)).id;
  for (const [environment, path, name] of [
    ["dev", "/", "app"],
    ["dev", "/app", "imp"],
    ["dev", "/", "other"],
    ["dev", "/", "src"],
    ["dev", "/", "hiddenimp"],
    ["prod", "/", "app"],
  ] as const)
    await createFolder(tenant, projectId, environment, path, name);
  // A change in dev:/src reaches the folders importing it: one the limited caller may read, one it may not.
  for (const path of ["/app/imp", "/hiddenimp"])
    expectOk(
      await tenant.admin.secretImports.create({
        body: { workspaceId: projectId, environment: "dev", path, import: { environment: "dev", path: "/src" } },
      }),
    );
});

/** A caller that may subscribe to every event type anywhere but describe only the secrets under /app. */
const appReader = async () => {
  const role = await insertCustomRole(tenant, projectId, [
    {
      subject: "secret-events",
      inverted: false,
      action: ["subscribe-on-created", "subscribe-on-updated", "subscribe-on-deleted", "subscribe-on-import-mutations"],
    },
    {
      subject: "secrets",
      inverted: false,
      action: ["describeSecret"],
      conditions: { secretPath: { $glob: "/app/**" } },
    },
  ]);
  return createIdentity(tenant, { projectId, projectRole: role });
};

describe("subscription shapes", () => {
  it("{projectId} alone streams every event of every environment and path the caller may read, nothing else", async () => {
    const reader = await appReader();
    const limited = await subscribe(reader.token);
    const admin = await subscribe(tenant.adminToken);
    expect([limited.status, admin.status]).toEqual([200, 200]);

    expectOk(await write("dev", "/other", "HIDDEN_OTHER"));
    expectOk(await write("dev", "/app", "SHOWN_DEV"));
    expectOk(
      await tenant.admin.secretsV4.update({
        params: { secretName: "SHOWN_DEV" },
        body: { projectId, environment: "dev", secretPath: "/app", secretValue: "changed" },
      }),
    );
    expectOk(
      await tenant.admin.secretsV4.delete({
        params: { secretName: "SHOWN_DEV" },
        body: { projectId, environment: "dev", secretPath: "/app" },
      }),
    );
    expectOk(await write("prod", "/app", "SHOWN_PROD"));
    expectOk(await write("dev", "/src", "HIDDEN_SOURCE"));
    // Events arrive in commit order: once this one is in, every earlier one would have been.
    expectOk(await write("dev", "/app", "LAST_ONE"));

    expect(await eventsUntil(limited, "LAST_ONE")).toEqual([
      "secret:create dev /app SHOWN_DEV",
      "secret:update dev /app SHOWN_DEV",
      "secret:delete dev /app SHOWN_DEV",
      "secret:create prod /app SHOWN_PROD",
      "secret:import-mutation dev /app/imp",
      "secret:create dev /app LAST_ONE",
    ]);
    for (const hidden of ["HIDDEN_OTHER", "HIDDEN_SOURCE", "/other", "/src", "/hiddenimp"])
      expect(limited.raw()).not.toContain(hidden);

    const everything = await eventsUntil(admin, "LAST_ONE");
    expect(everything).toEqual(
      expect.arrayContaining([
        "secret:create dev /other HIDDEN_OTHER",
        "secret:create prod /app SHOWN_PROD",
        "secret:create dev /src HIDDEN_SOURCE",
        "secret:import-mutation dev /app/imp",
        "secret:import-mutation dev /hiddenimp",
      ]),
    );
    expect(everything).toHaveLength(9);
  });

  it("registrations without event get every event type under their conditions, nested or flat", async () => {
    const nested = await subscribe(tenant.adminToken, [{ conditions: { environmentSlug: "dev", secretPath: "/app" } }]);
    // The flat shape: the conditions on the entry itself.
    const flat = await subscribe(tenant.adminToken, [{ environmentSlug: "prod", secretPath: "/" }]);
    expect([nested.status, flat.status]).toEqual([200, 200]);

    expectOk(await write("dev", "/other", "NOT_UNDER_APP"));
    expectOk(await write("dev", "/app", "NESTED_KEY"));
    expectOk(
      await tenant.admin.secretsV4.delete({
        params: { secretName: "NESTED_KEY" },
        body: { projectId, environment: "dev", secretPath: "/app" },
      }),
    );
    expectOk(await write("dev", "/src", "FEEDS_IMPORTS"));
    expectOk(await write("prod", "/app", "PROD_KEY"));
    expectOk(await write("dev", "/app", "NESTED_LAST"));

    expect(await eventsUntil(nested, "NESTED_LAST")).toEqual([
      "secret:create dev /app NESTED_KEY",
      "secret:delete dev /app NESTED_KEY",
      "secret:import-mutation dev /app/imp",
      "secret:create dev /app NESTED_LAST",
    ]);
    expect(await eventsUntil(flat, "PROD_KEY")).toEqual(["secret:create prod /app PROD_KEY"]);
    expectOk(await write("prod", "/", "FLAT_LAST"));
    expect(await eventsUntil(flat, "FLAT_LAST")).toEqual([
      "secret:create prod /app PROD_KEY",
      "secret:create prod / FLAT_LAST",
    ]);
  });

  it("a registration without event carries only the event types the caller may subscribe to", async () => {
    const role = await insertCustomRole(tenant, projectId, [
      { subject: "secret-events", inverted: false, action: ["subscribe-on-created"] },
      { subject: "secrets", inverted: false, action: ["describeSecret"] },
    ]);
    const creator = await createIdentity(tenant, { projectId, projectRole: role });
    const stream = await subscribe(creator.token, [{ conditions: { environmentSlug: "dev", secretPath: "/app" } }]);
    expect(stream.status).toBe(200);
    expectOk(await write("dev", "/app", "ONLY_CREATED"));
    expectOk(
      await tenant.admin.secretsV4.delete({
        params: { secretName: "ONLY_CREATED" },
        body: { projectId, environment: "dev", secretPath: "/app" },
      }),
    );
    expectOk(await write("dev", "/app", "CREATED_LAST"));
    expect(await eventsUntil(stream, "CREATED_LAST")).toEqual([
      "secret:create dev /app ONLY_CREATED",
      "secret:create dev /app CREATED_LAST",
    ]);
  });

  it("the full shape still streams what it registers", async () => {
    const stream = await subscribe(tenant.adminToken, [
      ...on("/app", "prod"),
      { event: "secret:create", conditions: { environmentSlug: "dev", secretPath: "/app" } },
    ]);
    expect(stream.status).toBe(200);
    expectOk(await write("dev", "/other", "FULL_ELSEWHERE"));
    expectOk(await write("prod", "/app", "FULL_PROD"));
    expectOk(await write("dev", "/app", "FULL_DEV"));
    expect(await eventsUntil(stream, "FULL_DEV")).toEqual([
      "secret:create prod /app FULL_PROD",
      "secret:create dev /app FULL_DEV",
    ]);
    expect(stream.raw()).not.toContain("FULL_ELSEWHERE");
  });

  it("403 without a right to subscribe, 404 for another organization's project, 422 past the bounds", async () => {
    const noAccess = await createIdentity(tenant, { projectId, projectRole: "no-access" });
    const describer = await createIdentity(tenant, {
      projectId,
      projectRole: await insertCustomRole(tenant, projectId, [
        { subject: "secrets", inverted: false, action: ["describeSecret"] },
      ]),
    });
    for (const token of [noAccess.token, describer.token]) {
      const refused = await subscribe(token);
      expect(refused.status).toBe(403);
      expect(refused.error?.error).toBe("PermissionDenied");
      expect((await subscribe(token, [{}])).status).toBe(403);
    }
    // Subscribe rights only under /app: an entry without event elsewhere is refused, one there is not.
    const appOnly = await createIdentity(tenant, {
      projectId,
      projectRole: await insertCustomRole(tenant, projectId, [
        {
          subject: "secret-events",
          inverted: false,
          action: ["subscribe-on-created", "subscribe-on-updated"],
          conditions: { secretPath: { $glob: "/app/**" } },
        },
      ]),
    });
    expect((await subscribe(appOnly.token, [{ environmentSlug: "dev", secretPath: "/other" }])).status).toBe(403);
    expect((await subscribe(appOnly.token, [{ environmentSlug: "dev", secretPath: "/app" }])).status).toBe(200);
    expect((await subscribe(appOnly.token)).status).toBe(200);

    const stranger = await createTenant(tenant.app);
    expect((await subscribe(stranger.adminToken)).status).toBe(404);
    expect((await subscribe(stranger.adminToken, [{}])).status).toBe(404);

    expect((await subscribe(tenant.adminToken, [])).status).toBe(422);
    expect((await subscribe(tenant.adminToken, Array(11).fill({}))).status).toBe(422);
    expect((await subscribe(tenant.adminToken, [{ secretPath: "/app" }])).status).toBe(422);
    expect((await subscribe(tenant.adminToken, [{ event: "secret:rename" }])).status).toBe(422);
  });
});
