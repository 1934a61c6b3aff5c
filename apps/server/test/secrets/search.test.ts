import { beforeAll, describe, expect, it } from "vitest";
import type { SecretSearchHit } from "@keyward/contract";
import { createIdentity, createProject, createTenant } from "../helpers/tenant";
import { createFolder, createSecretsScope, expectOk, identityWithRules, putSecret, type SecretsScope } from "./helpers";

type Client = SecretsScope["tenant"]["admin"];
type Query = Parameters<Client["secretSearch"]["search"]>[0]["query"];

const placeOf = (hit: SecretSearchHit) => `${hit.environment}:${hit.secretPath}:${hit.secretKey}`;

describe("secret search across a project", () => {
  let scope: SecretsScope;
  let dbTag: string;
  const search = async (client: Client, query: Query = {}) =>
    client.secretSearch.search({ params: { projectId: scope.projectId }, query });
  const places = async (client: Client, query: Query = {}) =>
    expectOk(await search(client, query)).secrets.map(placeOf);

  beforeAll(async () => {
    scope = await createSecretsScope();
    const { tenant, projectId, http } = scope;
    dbTag = expectOk(
      await tenant.admin.secretTags.projects.create({ params: { projectId }, body: { slug: "db", color: "" } }),
    ).tag.id;
    for (const environment of ["dev", "staging"]) {
      await createFolder(tenant, projectId, environment, "/", "app");
      await createFolder(tenant, projectId, environment, "/app", "worker");
    }
    await createFolder(tenant, projectId, "prod", "/", "other");
    const put = (environment: string, secretPath: string, key: string, tagged = false) =>
      putSecret(http, projectId, key, `value-of-${environment}-${key}`, {
        environment,
        secretPath,
        ...(tagged ? { tagIds: [dbTag] } : {}),
      });
    await Promise.all([
      put("dev", "/", "DB_HOST", true),
      put("dev", "/", "API_KEY"),
      put("dev", "/app", "DB_PASSWORD", true),
      put("dev", "/app", "APP_NAME"),
      put("dev", "/app/worker", "DB_QUEUE"),
      put("staging", "/", "DB_HOST"),
      put("staging", "/app", "DB_PASSWORD", true),
      put("staging", "/app/worker", "worker_db_url"),
      put("prod", "/other", "OTHER_DB"),
    ]);
  });

  it("finds keys by case-insensitive substring over every environment and folder, in key order, values hidden", async () => {
    const { secrets, nextCursor } = expectOk(await search(scope.tenant.admin, { key: "db" }));
    expect(secrets.map((s) => s.secretKey)).toEqual([
      "DB_HOST",
      "DB_HOST",
      "DB_PASSWORD",
      "DB_PASSWORD",
      "DB_QUEUE",
      "OTHER_DB",
      "worker_db_url",
    ]);
    expect(nextCursor).toBeNull();
    const devPassword = secrets.find((s) => s.environment === "dev" && s.secretKey === "DB_PASSWORD")!;
    expect(devPassword).toMatchObject({ secretPath: "/app", version: 1, type: "shared", secretValueHidden: true });
    expect(devPassword.tags.map((t) => t.slug)).toEqual(["db"]);
    expect(devPassword.updatedAt).toMatch(/Z$/);
    expect(secrets.every((s) => s.secretValue === undefined)).toBe(true);
  });

  it("filters by key glob, tag, path prefix or glob, and environment", async () => {
    const admin = scope.tenant.admin;
    expect(await places(admin, { key: "DB_*", environment: "dev" })).toEqual([
      "dev:/:DB_HOST",
      "dev:/app:DB_PASSWORD",
      "dev:/app/worker:DB_QUEUE",
    ]);
    expect(await places(admin, { key: "{API,APP}_*" })).toEqual(["dev:/:API_KEY", "dev:/app:APP_NAME"]);
    expect(await places(admin, { key: "!*_*" })).toEqual([]);
    // Same keys come in folder order, not environment order: compared as sets.
    expect((await places(admin, { tag: "db" })).sort()).toEqual([
      "dev:/:DB_HOST",
      "dev:/app:DB_PASSWORD",
      "staging:/app:DB_PASSWORD",
    ]);
    expect(await places(admin, { path: "/app", environment: "staging" })).toEqual([
      "staging:/app:DB_PASSWORD",
      "staging:/app/worker:worker_db_url",
    ]);
    expect(await places(admin, { path: "/*/worker" })).toEqual([
      "dev:/app/worker:DB_QUEUE",
      "staging:/app/worker:worker_db_url",
    ]);
    expect(await places(admin, { key: "nothing-like-this" })).toEqual([]);
    expect(await places(admin, { environment: "nope" })).toEqual([]);
  });

  it("pages with a cursor in a stable order, and returns values only when asked", async () => {
    const all = await places(scope.tenant.admin);
    expect(all).toHaveLength(9);
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < 10; i++) {
      const page = expectOk(await search(scope.tenant.admin, { limit: 2, ...(cursor ? { cursor } : {}) }));
      seen.push(...page.secrets.map(placeOf));
      if (!page.nextCursor) break;
      cursor = page.nextCursor;
    }
    expect(seen).toEqual(all);
    const withValues = expectOk(await search(scope.tenant.admin, { key: "OTHER_DB", includeValues: "true" }));
    expect(withValues.secrets[0]).toMatchObject({ secretValueHidden: false, secretValue: "value-of-prod-OTHER_DB" });
  });

  it("shows a restricted caller only what its rules let it describe, and values only where it may read them", async () => {
    const appOnly = await identityWithRules(scope, [
      {
        subject: "secrets",
        action: ["describeSecret"],
        inverted: false,
        conditions: { environment: "dev", secretPath: { $glob: "/app/**" } },
      },
    ]);
    const appPlaces = await places(appOnly.client, { includeValues: "true" });
    expect(appPlaces).toEqual(["dev:/app:APP_NAME", "dev:/app:DB_PASSWORD", "dev:/app/worker:DB_QUEUE"]);
    const hidden = expectOk(await search(appOnly.client, { includeValues: "true" })).secrets;
    expect(hidden.every((s) => s.secretValueHidden && s.secretValue === undefined)).toBe(true);

    const byName = await identityWithRules(scope, [
      { subject: "secrets", action: ["read"], inverted: false, conditions: { secretName: { $glob: "DB_*" } } },
      { subject: "secrets", action: ["read"], inverted: true, conditions: { environment: "staging" } },
    ]);
    const page = expectOk(await search(byName.client, { limit: 1 }));
    expect(page.secrets.map(placeOf)).toEqual(["dev:/:DB_HOST"]);
    expect(page.secrets[0]).toMatchObject({ secretValueHidden: true });
    expect(await places(byName.client, { includeValues: "true" })).toEqual([
      "dev:/:DB_HOST",
      "dev:/app:DB_PASSWORD",
      "dev:/app/worker:DB_QUEUE",
    ]);
    const valued = expectOk(await search(byName.client, { key: "DB_HOST", includeValues: "true" })).secrets;
    expect(valued.map((s) => s.secretValue)).toEqual(["value-of-dev-DB_HOST"]);
  });

  it("answers 403 without any secrets right, 404 for another organization's project, 400 and 422 on bad input", async () => {
    const noSecrets = await createIdentity(scope.tenant, { projectId: scope.projectId, projectRole: "no-access" });
    expect((await search(noSecrets.client)).status).toBe(403);

    const other = await createTenant();
    const theirs = await createProject(other);
    const foreign = await scope.tenant.admin.secretSearch.search({ params: { projectId: theirs.id }, query: {} });
    expect(foreign.status).toBe(404);
    const notAnId = await scope.tenant.admin.secretSearch.search({ params: { projectId: "nope" }, query: {} });
    expect(notAnId.status).toBe(404);

    const admin = scope.tenant.admin;
    expect(await search(admin, { key: "DB_[" })).toMatchObject({ status: 400 });
    expect(await search(admin, { key: "a/b*" })).toMatchObject({ status: 400 });
    expect(await search(admin, { path: "/***a*b*" })).toMatchObject({ status: 400 });
    expect(await search(admin, { cursor: "not-a-cursor" })).toMatchObject({
      status: 400,
      body: { message: "Invalid cursor" },
    });
    for (const limit of [0, 201]) expect((await search(admin, { limit })).status).toBe(422);
  });
});
