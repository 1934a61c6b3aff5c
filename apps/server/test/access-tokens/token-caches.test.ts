import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { flushTokenUses } from "../../src/modules/access-tokens/token-use.job";
import { startTestApp, type TestApp } from "../helpers/app";
import { createIdentity, createProject, createTenant, expectOk, type TestIdentity } from "../helpers/tenant";

/** An app whose token and ability caches hold three entries, so a handful of identities overflow them. */
const BOUND = 3;
let app: TestApp;

beforeAll(async () => {
  app = await startTestApp({
    TOKEN_CACHE_MAX_ENTRIES: String(BOUND),
    ABILITY_CACHE_MAX_ENTRIES: String(BOUND),
    PROJECT_ACCESS_CACHE_MAX_ENTRIES: String(BOUND),
  });
});
afterAll(() => app.close());

/** What the `keyward_cache_entries` gauge reports, by cache. */
const cacheEntries = async (): Promise<Record<string, number>> =>
  Object.fromEntries(
    (await app.deps.metrics.cacheEntries.get()).values.map((v) => [String(v.labels.cache), v.value] as const),
  );

describe("token and ability caches past their bound", () => {
  it("hold at most their bound, report it as a gauge, and still answer each identity rightly", async () => {
    const tenant = await createTenant(app);
    const project = await createProject(tenant);
    const identities: TestIdentity[] = [];
    for (let i = 0; i < 6; i++) {
      identities.push(await createIdentity(tenant, { projectId: project.id, projectRole: "viewer" }));
    }
    const read = (identity: TestIdentity) =>
      identity.client.secretsV4.list({ query: { projectId: project.id, environment: "dev", secretPath: "/" } });
    for (let pass = 0; pass < 2; pass++) {
      for (const identity of identities) expect((await read(identity)).status).toBe(200);
    }
    // The viewers hold one built ability between them.
    const abilityKeyOf = (identity: TestIdentity) => app.deps.abilityCache.get(identity.id, project.id)?.abilityKey;
    expect(abilityKeyOf(identities[5]!)).toBeDefined();
    expect(abilityKeyOf(identities[4]!)).toBe(abilityKeyOf(identities[5]!));
    const sizes = await cacheEntries();
    expect(sizes.access_tokens).toBeGreaterThan(0);
    expect(sizes.access_tokens).toBeLessThanOrEqual(BOUND);
    expect(sizes.project_access).toBeGreaterThan(0);
    expect(sizes.project_access).toBeLessThanOrEqual(BOUND);
    expect(sizes.abilities).toBeGreaterThan(0);
    expect(sizes.abilities).toBeLessThanOrEqual(BOUND);

    // Evicted entries come back from the database as it is now: a revoked token and a removed member.
    const [revoked, removed, kept] = identities as [TestIdentity, TestIdentity, TestIdentity];
    expectOk(await tenant.anonymous.accessTokens.revoke({ body: { accessToken: revoked.token } }));
    expectOk(
      await tenant.admin.projects.deleteIdentityMembership({
        params: { projectId: project.id, identityId: removed.id },
      }),
    );
    for (const identity of identities.slice(3)) expect((await read(identity)).status).toBe(200);
    expect((await read(revoked)).status).toBe(401);
    expect((await read(removed)).status).toBe(403);
    expect((await read(kept)).status).toBe(200);
  });

  it("rebuilds a shared ability only for the holder whose grants changed", async () => {
    const tenant = await createTenant(app);
    const project = await createProject(tenant);
    const [gains, keeps] = [
      await createIdentity(tenant, { projectId: project.id, projectRole: "no-access" }),
      await createIdentity(tenant, { projectId: project.id, projectRole: "no-access" }),
    ];
    const read = (identity: TestIdentity) =>
      identity.client.secretsV4.list({ query: { projectId: project.id, environment: "dev", secretPath: "/" } });
    expect((await read(gains)).status).toBe(403);
    expect((await read(keeps)).status).toBe(403);
    const sharedKey = app.deps.abilityCache.get(keeps.id, project.id)?.abilityKey;
    expect(app.deps.abilityCache.get(gains.id, project.id)?.abilityKey).toBe(sharedKey);

    expectOk(
      await tenant.admin.privileges.v2.create({
        body: {
          identityId: gains.id,
          projectId: project.id,
          permissions: [{ subject: "secrets", action: ["describeSecret", "readValue"] }],
          type: { isTemporary: false },
        },
      }),
    );
    expect((await read(gains)).status).toBe(200);
    expect((await read(keeps)).status).toBe(403);
    expect(app.deps.abilityCache.get(gains.id, project.id)?.abilityKey).not.toBe(sharedKey);
    expect(app.deps.abilityCache.get(keeps.id, project.id)?.abilityKey).toBe(sharedKey);
  });

  it("records a token's last use when the token-use job flushes, in one statement for many tokens", async () => {
    const tenant = await createTenant(app);
    const identities = [await createIdentity(tenant, { orgRole: "member" }), await createIdentity(tenant)];
    const lastUsed = async (identity: TestIdentity) =>
      expectOk(await tenant.admin.tokenAuth.listTokens({ params: { identityId: identity.id }, query: {} })).tokens[0]!
        .accessTokenLastUsedAt;
    await flushTokenUses(app.deps);
    expect(await lastUsed(identities[0]!)).toBeNull();
    for (const identity of identities) await identity.client.accessTokens.self();
    expect(app.deps.tokenUses.pending.size).toBeGreaterThanOrEqual(2);
    await flushTokenUses(app.deps);
    expect(app.deps.tokenUses.pending.size).toBe(0);
    for (const identity of identities) expect(await lastUsed(identity)).not.toBeNull();
  });
});
