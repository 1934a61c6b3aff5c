import { describe, expect, it } from "vitest";
import { createIdentity, createProject, createTenant, expectOk, uniqueName } from "../helpers/tenant";
import { authenticate } from "../../src/modules/access-tokens/access-token.service";
import { bufferAuditEvent, flushAuditBuffer } from "../../src/modules/audit/audit-buffer";
import { auditEvents, auditEventsWhen, eventTypes } from "./helpers";

describe("audit log: what is recorded", () => {
  it("records a change in the same transaction, with its actor, project and request", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const name = uniqueName("API_KEY");
    expectOk(
      await tenant.admin.secretsV4.create({
        params: { secretName: name },
        body: { projectId: project.id, environment: "dev", secretValue: "s3cr3t-value-do-not-log" },
      }),
    );
    const events = await auditEvents(tenant, { eventType: "create-secret" });
    expect(events).toHaveLength(1);
    const [event] = events;
    expect(event).toMatchObject({
      orgId: tenant.orgId,
      projectId: project.id,
      projectName: project.name,
      actor: { type: "identity", metadata: { identityId: tenant.adminIdentityId } },
      event: { type: "create-secret", metadata: { secretKey: name, environment: "dev", secretPath: "/" } },
      ipAddress: "127.0.0.1",
    });
    expect(JSON.stringify(event)).not.toContain("s3cr3t-value-do-not-log");
    expect(Date.parse(event!.expiresAt!) - Date.parse(event!.createdAt)).toBe(90 * 86_400_000);
  });

  it("records secret reads off the request path, once flushed", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    expectOk(
      await tenant.admin.secretsV4.create({
        params: { secretName: "READ_ME" },
        body: { projectId: project.id, environment: "dev", secretValue: "v" },
      }),
    );
    expectOk(
      await tenant.admin.secretsV4.get({
        params: { secretName: "READ_ME" },
        query: { projectId: project.id, environment: "dev" },
      }),
    );
    expectOk(await tenant.admin.secretsV4.list({ query: { projectId: project.id, environment: "dev" } }));
    const types = eventTypes(await auditEvents(tenant, { projectId: project.id }));
    expect(types).toEqual(expect.arrayContaining(["get-secret", "get-secrets", "create-secret"]));
  });

  it("gives the reads of each token their own actor, shared and frozen across that token's requests", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const reader = await createIdentity(tenant, { projectId: project.id, projectRole: "viewer" });
    const first = await authenticate(tenant.app.deps, `Bearer ${reader.token}`, "127.0.0.1");
    const second = await authenticate(tenant.app.deps, `Bearer ${reader.token}`, "127.0.0.1");
    expect(second).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(first).toMatchObject({ type: "identity", id: reader.id, orgId: tenant.orgId, authMethod: "token-auth" });

    expectOk(
      await tenant.admin.secretsV4.create({
        params: { secretName: "SHARED_READ" },
        body: { projectId: project.id, environment: "dev", secretValue: "v" },
      }),
    );
    const read = { params: { secretName: "SHARED_READ" }, query: { projectId: project.id, environment: "dev" } };
    // Interleaved, so a cached actor of one token would show up in the other's events.
    for (let i = 0; i < 3; i += 1) {
      expectOk(await reader.client.secretsV4.get(read));
      expectOk(await tenant.admin.secretsV4.get(read));
    }
    const reads = await auditEvents(tenant, { projectId: project.id, eventType: "get-secret" });
    const actors = reads.map((e) => (e.actor.metadata as { identityId?: string }).identityId);
    expect(actors.filter((id) => id === reader.id)).toHaveLength(3);
    expect(actors.filter((id) => id === tenant.adminIdentityId)).toHaveLength(3);
    for (const event of reads)
      expect(event.actor).toMatchObject({ type: "identity", metadata: { authMethod: "token-auth" } });
  });

  it("keeps an event whose metadata cannot be serialised without that metadata, not throwing or blocking the others", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const { deps } = tenant.app;
    const marker = uniqueName("cycle");
    const event = (metadata: Record<string, unknown>) => ({
      orgId: tenant.orgId,
      projectId: project.id,
      actor: { type: "identity" as const, id: tenant.adminIdentityId, metadata: {} },
      type: "get-secret",
      metadata,
      ipAddress: null,
      userAgent: null,
      createdAt: new Date(),
    });
    const cyclic: Record<string, unknown> = { marker };
    cyclic.self = cyclic;
    const pendingBefore = deps.auditBuffer.pending.length;
    expect(() => bufferAuditEvent(deps, event(cyclic))).not.toThrow();
    expect(deps.auditBuffer.pending).toHaveLength(pendingBefore + 1);
    bufferAuditEvent(deps, event({ marker }));
    await flushAuditBuffer(deps);
    const written = await auditEvents(tenant, { projectId: project.id, eventType: "get-secret" });
    expect(written.map((e) => e.event.metadata)).toEqual([{ marker }, { metadataReduced: true }]);
    expect(written[1]!.actor).toMatchObject({ type: "identity" });
  });

  it("gives way to requests between the batches of a large flush", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const { deps } = tenant.app;
    const marker = uniqueName("flush");
    const events = 450;
    for (let i = 0; i < events; i += 1)
      bufferAuditEvent(deps, {
        orgId: tenant.orgId,
        projectId: project.id,
        actor: { type: "identity", id: tenant.adminIdentityId, metadata: { identityId: tenant.adminIdentityId } },
        type: "get-secret",
        metadata: { marker, i },
        ipAddress: "127.0.0.1",
        userAgent: null,
        createdAt: new Date(),
      });
    // What the event loop sees once the flush has started: I/O and timers run before it ends.
    let pendingWhenLoopRan: number | undefined;
    const flushing = flushAuditBuffer(deps);
    setImmediate(() => {
      pendingWhenLoopRan = deps.auditBuffer.pending.length;
    });
    await flushing;
    expect(pendingWhenLoopRan).toBeGreaterThan(0);
    const written = await auditEvents(tenant, { projectId: project.id, eventType: "get-secret" });
    expect(written.filter((e) => (e.event.metadata as { marker?: string }).marker === marker)).toHaveLength(events);
  });

  it("writes no event for a change that was rolled back", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const res = await tenant.admin.secretsV4.batchCreate({
      body: {
        projectId: project.id,
        environment: "dev",
        secrets: [
          { secretKey: "DUP", secretValue: "a" },
          { secretKey: "DUP", secretValue: "b" },
        ],
      },
    });
    expect(res.status).toBe(400);
    expect(eventTypes(await auditEvents(tenant, { projectId: project.id }))).not.toContain("create-secrets");
  });

  it("records logins and refused logins with Infisical's event names", async () => {
    const tenant = await createTenant();
    const identity = await createIdentity(tenant, { orgRole: "member" });
    expectOk(await tenant.admin.universalAuth.attach({ params: { identityId: identity.id }, body: {} }));
    const { clientId } = expectOk(
      await tenant.admin.universalAuth.get({ params: { identityId: identity.id } }),
    ).identityUniversalAuth;
    const { clientSecret } = expectOk(
      await tenant.admin.universalAuth.createClientSecret({ params: { identityId: identity.id }, body: {} }),
    );
    expectOk(await tenant.anonymous.universalAuth.login({ body: { clientId, clientSecret } }));
    const refused = await tenant.anonymous.universalAuth.login({ body: { clientId, clientSecret: "wrong" } });
    expect(refused.status).toBe(401);
    const events = await auditEventsWhen(
      tenant,
      { eventType: "login-identity-universal-auth,login-identity-universal-auth-failed" },
      (found) => found.length >= 2,
    );
    const ok = events.find((e) => e.event.type === "login-identity-universal-auth")!;
    expect(ok.actor.metadata).toMatchObject({ identityId: identity.id, authMethod: "universal-auth" });
    expect(ok.event.metadata).toMatchObject({ identityId: identity.id, identityUniversalAuthId: expect.any(String) });
    const failed = events.find((e) => e.event.type === "login-identity-universal-auth-failed")!;
    expect(failed.event.metadata).toMatchObject({ clientId, identityId: identity.id, reasonCode: "UnauthorizedError" });
    expect(JSON.stringify(events)).not.toContain(clientSecret);
  });
});
