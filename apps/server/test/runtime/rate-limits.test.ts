import { createKeywardClient, type ErrorBody } from "@keyward/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app";
import { sameDatabaseInstance, type Instance } from "./instances";

let app: TestApp;
let other: Instance;

beforeAll(async () => {
  // Behind a trusted proxy on loopback, so each test can speak for client addresses of its own.
  app = await startTestApp({
    TRUST_PROXY: "127.0.0.1/8",
    // One window for the whole file: a test never straddles a window boundary.
    RATE_LIMIT_WINDOW_MS: "3600000",
    RATE_LIMIT_LOGIN: "3",
    RATE_LIMIT_TOKEN: "2",
    RATE_LIMIT_SECRET_READ: "2",
  });
  other = await sameDatabaseInstance(app);
}, 120_000);

afterAll(async () => {
  await other?.close();
  await app?.close();
});

const post = (baseUrl: string, path: string, ip: string, body: unknown) =>
  fetch(`${baseUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-forwarded-for": ip },
    body: JSON.stringify(body),
  });

const LOGIN = "/api/v1/auth/universal-auth/login";
const badLogin = { clientId: "00000000-0000-4000-8000-000000000000", clientSecret: "wrong" };

describe("rate limits per client IP", () => {
  it("answers 429 with Retry-After and the JSON error body past the login limit, counting across instances", async () => {
    const ip = "203.0.113.10";
    const statuses = [];
    for (const baseUrl of [app.baseUrl, other.baseUrl, app.baseUrl]) {
      statuses.push((await post(baseUrl, LOGIN, ip, badLogin)).status);
    }
    expect(statuses.every((status) => status !== 429)).toBe(true);
    const limited = await post(other.baseUrl, LOGIN, ip, badLogin);
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(3_600);
    expect(await limited.json()).toEqual({
      reqId: expect.stringMatching(/^req-/),
      statusCode: 429,
      error: "TooManyRequests",
      message: "Too many requests; please retry later",
    });
    // Another client address has its own count.
    expect((await post(app.baseUrl, LOGIN, "203.0.113.11", badLogin)).status).not.toBe(429);
  });

  it("limits token renewals and revocations", async () => {
    const ip = "203.0.113.20";
    const revoke = () => post(app.baseUrl, "/api/v1/auth/token/revoke", ip, { accessToken: "not-a-token" });
    expect((await revoke()).status).not.toBe(429);
    expect((await revoke()).status).not.toBe(429);
    expect((await revoke()).status).toBe(429);
  });

  it("limits secret reads, and leaves other routes alone", async () => {
    const ip = "203.0.113.30";
    const read = () =>
      fetch(`${app.baseUrl}/api/v3/secrets/raw?workspaceId=00000000-0000-4000-8000-000000000000&environment=dev`, {
        headers: { authorization: `Bearer ${app.rootToken}`, "x-forwarded-for": ip },
      });
    expect((await read()).status).not.toBe(429);
    expect((await read()).status).not.toBe(429);
    expect((await read()).status).toBe(429);
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${app.baseUrl}/api/v1/identities`, {
        headers: { authorization: `Bearer ${app.rootToken}`, "x-forwarded-for": ip },
      });
      expect(res.status).toBe(200);
    }
  });

  it("is a typed response of the client on login, token and secret-read routes", async () => {
    const client = createKeywardClient({
      baseUrl: app.baseUrl,
      token: app.rootToken,
      headers: { "x-forwarded-for": "203.0.113.40" },
    });
    const login = () => client.universalAuth.login({ body: badLogin });
    for (let i = 0; i < 3; i++) expect((await login()).status).not.toBe(429);
    const limited = await login();
    if (limited.status !== 429) throw new Error(`expected 429, got ${limited.status}`);
    const body: ErrorBody = limited.body;
    expect(body).toMatchObject({ statusCode: 429, error: "TooManyRequests" });
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);

    const read = () =>
      client.secretsV4.get({
        params: { secretName: "NOPE" },
        query: { projectId: "00000000-0000-4000-8000-000000000000", environment: "dev" },
      });
    for (let i = 0; i < 2; i++) expect((await read()).status).not.toBe(429);
    const readLimited = await read();
    expect(readLimited.status).toBe(429);
    expect(readLimited.body).toMatchObject({ error: "TooManyRequests" });
  });
});
