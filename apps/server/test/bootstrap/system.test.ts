import { describe, expect, it } from "vitest";
import { startTestApp } from "../helpers/app";
import type { ErrorBody } from "@keyward/client";
import { createIdentity, createTenant, expectOk } from "../helpers/tenant";

describe("system routes", () => {
  it("reports liveness and database readiness", async () => {
    const { anonymous } = await createTenant();
    const res = await anonymous.system.status();
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: "ok", ready: true });
  });

  it("serves the OpenAPI document at version 0.0.1", async () => {
    const { app } = await createTenant();
    const res = await fetch(`${app.baseUrl}/api/docs/openapi.json`);
    const doc = (await res.json()) as { info: { version: string }; paths: Record<string, unknown> };
    expect(doc.info.version).toBe("0.0.1");
    expect(doc.paths).toHaveProperty("/api/v1/auth/token-auth/identities/{identityId}");
  });

  it("answers unknown routes with a JSON 404 and a request id", async () => {
    const { app } = await createTenant();
    const res = await fetch(`${app.baseUrl}/api/v1/does-not-exist?x=1`);
    expect(res.status).toBe(404);
    expect(res.headers.get("x-request-id")).toMatch(/^req-[A-Za-z0-9]{14}$/);
    expect(await res.json()).toMatchObject({
      statusCode: 404,
      error: "Not Found",
      message: "Route GET:/api/v1/does-not-exist not found",
    });
  });

  it("rejects malformed JSON with 400 and oversized bodies with 413", async () => {
    const { app, adminToken } = await createTenant();
    const headers = { authorization: `Bearer ${adminToken}`, "content-type": "application/json" };
    const bad = await fetch(`${app.baseUrl}/api/v1/projects`, { method: "POST", headers, body: "{not json" });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ statusCode: 400, error: "BadRequest" });
    const big = await fetch(`${app.baseUrl}/api/v1/projects`, {
      method: "POST",
      headers,
      body: JSON.stringify({ projectName: "x", padding: "a".repeat(1_100_000) }),
    });
    expect(big.status).toBe(413);
    expect(await big.json()).toMatchObject({ statusCode: 413 });
  });

  it("lets only instance admins create organizations", async () => {
    const tenant = await createTenant();
    const res = await tenant.admin.system.createOrganization({ body: { name: "another" } });
    expect(res.status).toBe(403);
    const missing = await tenant.anonymous.system.createOrganization({ body: { name: "another" } });
    expect(missing.status).toBe(401);
    const invalid = await tenant.app.client(tenant.app.rootToken).system.createOrganization({ body: { name: "" } });
    expect(invalid.status).toBe(422);
  });
});

describe("database outage", () => {
  it("reports not ready and answers 503 with Retry-After without leaking the cause", async () => {
    const app = await startTestApp();
    const root = app.client(app.rootToken);
    expectOk(await root.identities.list({ query: {} }));
    await app.handle.close();
    try {
      const status = await app.client().system.status();
      expect(status.status).toBe(200);
      expect(status.body).toMatchObject({ status: "ok", ready: false });
      // A typed response: the contract declares 503 on every route.
      const res = await root.projects.create({ body: { projectName: "during-outage" } });
      if (res.status !== 503) throw new Error(`expected 503, got ${res.status}`);
      expect(res.headers.get("retry-after")).toBe("2");
      const body: ErrorBody = res.body;
      expect(body).toEqual({
        reqId: expect.stringMatching(/^req-/),
        statusCode: 503,
        error: "ServiceUnavailable",
        message: "The database is unavailable or did not answer in time; please retry shortly",
      });
    } finally {
      app.server.closeAllConnections();
      await new Promise<void>((resolve) => app.server.close(() => resolve()));
    }
  });
});

describe("instance bootstrap", () => {
  it("works once, returning a usable admin token that it says never expires, and the instance reads as set up", async () => {
    const app = await startTestApp();
    try {
      expect(app.bootstrap.warning).toContain("never expires");
      expect(app.bootstrap.warning).toContain("revoke this token");
      expect(expectOk(await app.client().system.config())).toEqual({ config: { initialized: true } });
      const again = await app.client().system.bootstrap({
        body: { email: "second@keyward.test", password: "x", organization: "Second" },
      });
      expect(again.status).toBe(400);
      expect(again.body).toMatchObject({ statusCode: 400, error: "BadRequest" });
      expect((again.body as { message: string }).message).toMatch(
        /^Instance has already been set up: use the admin token/,
      );
      const root = app.client(app.rootToken);
      const identities = expectOk(await root.identities.list({ query: {} }));
      expect(identities.identities.map((i) => i.name)).toContain("Instance Admin Identity");
      const invalid = await app
        .client()
        .system.bootstrap({ body: { email: "not-an-email", password: "x", organization: "A" } });
      expect(invalid.status).toBe(422);
    } finally {
      await app.close();
    }
  });

  it("returns the user, organization and identity of a fresh instance", async () => {
    const tenant = await createTenant();
    const member = await createIdentity(tenant, { orgRole: "member" });
    const res = await member.client.identities.get({ params: { identityId: member.id } });
    expect(res.status).toBe(200);
  });
});
