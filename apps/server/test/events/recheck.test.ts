import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKeywardClient } from "@keyward/client";
import { startTestApp, type TestApp } from "../helpers/app";
import { openEventStream } from "../helpers/event-stream";
import { createIdentity, createProject, createTenant, expectOk, type Tenant } from "../helpers/tenant";
import { configureSso, signedInPerson } from "../sso/sso-helpers";

/**
 * A stream checks its caller's credential again (as the route entry authenticates a request) at the
 * first ping after EVENTS_RECHECK_INTERVAL_S: a credential that no longer authenticates ends it.
 */

let app: TestApp;
let tenant: Tenant;
let projectId: string;
const register = [{ event: "secret:create", conditions: { environmentSlug: "dev", secretPath: "/" } }];
const REVOKED = { message: "Permission denied or refresh failed" };

beforeAll(async () => {
  app = await startTestApp({ EVENTS_PING_INTERVAL_S: "0.2", EVENTS_RECHECK_INTERVAL_S: "0.2" });
  tenant = await createTenant(app);
  projectId = (await createProject(tenant)).id;
}, 60_000);

afterAll(() => app?.close());

describe("the events stream's recheck of the caller", () => {
  it("ends an identity's stream once its access token is revoked", async () => {
    const identity = await createIdentity(tenant, { projectId, projectRole: "member" });
    const stream = await openEventStream(app.baseUrl, identity.token, { projectId, register });
    try {
      expect(stream.status).toBe(200);
      await stream.next((frame) => frame.event === "ping", 2_000);
      expectOk(
        await createKeywardClient({ baseUrl: app.baseUrl }).accessTokens.revoke({
          body: { accessToken: identity.token },
        }),
      );
      const error = await stream.next((frame) => frame.event === "error", 5_000);
      expect(JSON.parse(error.data!)).toEqual(REVOKED);
      await stream.ended;
    } finally {
      stream.close();
    }
  });

  it("ends a person's stream once they sign out everywhere", async () => {
    await configureSso(tenant);
    const person = await signedInPerson(tenant);
    expectOk(
      await tenant.admin.users.inviteProjectMembers({
        params: { projectId },
        body: { emails: [person.email], usernames: [], roleSlugs: ["admin"] },
      }),
    );
    const stream = await openEventStream(app.baseUrl, person.token, { projectId, register });
    try {
      expect(stream.status).toBe(200);
      await stream.next((frame) => frame.event === "ping", 2_000);
      expectOk(await person.client.users.revokeMySessions());
      const error = await stream.next((frame) => frame.event === "error", 5_000);
      expect(JSON.parse(error.data!)).toEqual(REVOKED);
      await stream.ended;
    } finally {
      stream.close();
    }
  });
});
