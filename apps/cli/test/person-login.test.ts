import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { inject } from "vitest";
import { cliSession, configureSso, handoffJson, postToListener, signInInBrowser } from "./browser";
import { keyward, unique, url } from "./helpers";

beforeAll(async () => {
  await configureSso();
});

const configHome = () => mkdtempSync(join(tmpdir(), "keyward-cli-person-"));
const profileOf = (home: string) =>
  JSON.parse(readFileSync(join(home, "keyward/profile.json"), "utf8")) as {
    method: string;
    token: string;
    refreshToken: string;
    email: string;
  };

/** `keyward login --org` with the browser replaced: the address it prints, once it prints it. */
const startLogin = (home: string, extra: string[] = [], env: Record<string, string> = {}) => {
  const run = keyward(["login", "--url", url(), "--org", inject("orgSlug"), ...extra], {
    configDir: home,
    env: { KEYWARD_BROWSER: "none", ...env },
  });
  const printed = new Promise<{ signIn: string; port: number; state: string }>((resolve, reject) => {
    let stderr = "";
    run.child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      const match = /(http:\/\/\S+\/api\/v1\/sso\/oidc\/login\?\S+)/.exec(stderr);
      if (match) {
        const signIn = new URL(match[1]!);
        resolve({
          signIn: match[1]!,
          port: Number(signIn.searchParams.get("callbackPort")),
          state: signIn.searchParams.get("callbackState")!,
        });
      }
    });
    void run.then((result) => reject(new Error(`keyward login ended before printing the address: ${result.stderr}`)));
  });
  return { run, printed };
};

const person = () => {
  const name = unique("person");
  return { sub: name, email: `${name}@keyward.test` };
};

/** A JWT-shaped token that expired an hour ago (unsigned: the CLI reads `exp` without verifying). */
const expiredJwt = () => {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
  return `${part({ alg: "HS256", typ: "JWT" })}.${part({ exp: Math.floor(Date.now() / 1000) - 3600 })}.c2lnbmF0dXJl`;
};

/** A full browser login: the stored profile's folder and the person. */
const loginThroughBrowser = async () => {
  const home = configHome();
  const who = person();
  const { run, printed } = startLogin(home);
  const { signIn, port, state } = await printed;
  const { landing, jar } = await signInInBrowser(signIn, who);
  const session = await cliSession(jar);
  const answer = await postToListener(port, handoffJson(session, state));
  expect(answer.status).toBe(200);
  const result = await run;
  expect(result.code, result.stderr).toBe(0);
  return { home, who, landing, port, state, result };
};

describe("keyward login for a person (single sign-on in the browser)", () => {
  it("signs in through the browser, stores a 0600 profile, and whoami names the person", async () => {
    const { home, who, landing, port, state, result } = await loginThroughBrowser();
    expect(landing.pathname).toBe("/login/cli");
    expect(landing.searchParams.get("callback_port")).toBe(String(port));
    expect(landing.searchParams.get("callback_state")).toBe(state);
    expect(state).toMatch(/^[\w-]{16,}$/);
    expect(result.stderr).toContain(`Logged in as ${who.email}`);

    expect(statSync(join(home, "keyward/profile.json")).mode & 0o777).toBe(0o600);
    const profile = profileOf(home);
    expect(profile).toMatchObject({ method: "user", email: who.email });
    expect(profile.refreshToken).toMatch(/^kwr_/);

    const whoami = await keyward(["whoami"], { configDir: home });
    expect(whoami.code, whoami.stderr).toBe(0);
    expect(whoami.stdout).toContain(`person: ${who.email}`);
    const json = await keyward(["whoami", "--output", "json"], { configDir: home });
    expect(JSON.parse(json.stdout)).toMatchObject({ person: { email: who.email }, tokenSource: "profile" });
  });

  it("answers CORS only for the server's origin and refuses a wrong state, then takes the right one", async () => {
    const home = configHome();
    const who = person();
    const { run, printed } = startLogin(home);
    const { signIn, port, state } = await printed;
    const serverOrigin = new URL(url()).origin;

    const preflight = await fetch(`http://127.0.0.1:${port}/`, {
      method: "OPTIONS",
      headers: { origin: serverOrigin, "access-control-request-method": "POST" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe(serverOrigin);
    expect(preflight.headers.get("access-control-allow-methods")).toBe("POST, OPTIONS");
    expect(preflight.headers.get("access-control-allow-headers")).toBe("Content-Type");
    const foreign = await fetch(`http://127.0.0.1:${port}/`, {
      method: "OPTIONS",
      headers: { origin: "http://evil.example", "access-control-request-method": "POST" },
    });
    expect(foreign.status).toBe(403);
    expect(foreign.headers.get("access-control-allow-origin")).toBeNull();

    const { jar } = await signInInBrowser(signIn, who);
    const session = await cliSession(jar);
    const wrong = await postToListener(port, handoffJson(session, "x".repeat(32)));
    expect(wrong.status).toBe(400);
    const missing = await postToListener(port, handoffJson(session));
    expect(missing.status).toBe(400);
    const otherSite = await postToListener(port, handoffJson(session, state), "http://evil.example");
    expect(otherSite.status).toBe(403);

    const right = await postToListener(port, handoffJson(session, state));
    expect(right.status).toBe(200);
    expect(right.headers.get("access-control-allow-origin")).toBe(serverOrigin);
    const result = await run;
    expect(result.code, result.stderr).toBe(0);
    // One POST is all it takes: the listener is gone.
    await expect(postToListener(port, handoffJson(session, state))).rejects.toThrow();
  });

  it("gives up with a clear message when the browser never comes back", async () => {
    const { run, printed } = startLogin(configHome(), [], { KEYWARD_LOGIN_TIMEOUT_S: "1" });
    await printed;
    const result = await run;
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("Timed out after 1 s waiting for the browser sign-in");
    expect(result.stderr).toContain("--no-browser");
  });

  it("renews the session silently when the access token has expired, storing the rotated refresh token", async () => {
    const { home, who } = await loginThroughBrowser();
    const before = profileOf(home);
    const expired = expiredJwt();
    writeFileSync(join(home, "keyward/profile.json"), JSON.stringify({ ...before, token: expired }));

    const whoami = await keyward(["whoami"], { configDir: home });
    expect(whoami.code, whoami.stderr).toBe(0);
    expect(whoami.stdout).toContain(`person: ${who.email}`);
    const after = profileOf(home);
    // (Within the same second the server may sign the very same access token again.)
    expect(after.token).not.toBe(expired);
    const { exp } = JSON.parse(Buffer.from(after.token.split(".")[1]!, "base64url").toString()) as { exp: number };
    expect(exp * 1000).toBeGreaterThan(Date.now() + 60_000);
    expect(after.refreshToken).not.toBe(before.refreshToken);
    expect(statSync(join(home, "keyward/profile.json")).mode & 0o777).toBe(0o600);

    // The old refresh token was spent: only the stored one works now.
    const stale = await fetch(`${url()}/api/v1/auth/token`, {
      method: "POST",
      headers: { cookie: `jid=${before.refreshToken}` },
    });
    expect(stale.status).toBe(401);
  });

  it("renews once for several commands started together (a refresh token spent twice would end the session)", async () => {
    const { home, who } = await loginThroughBrowser();
    const before = profileOf(home);
    writeFileSync(join(home, "keyward/profile.json"), JSON.stringify({ ...before, token: expiredJwt() }));
    const runs = await Promise.all([1, 2, 3].map(() => keyward(["whoami"], { configDir: home })));
    for (const run of runs) {
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain(`person: ${who.email}`);
    }
    // The session is still alive: the stored refresh token renews it.
    const renew = await keyward(["token", "renew"], { configDir: home });
    expect(renew.code, renew.stderr).toBe(0);
    expect(renew.stdout).toMatch(/renewed; expires in \d+ s/);
  });

  it("renews once when the server refuses a token that has not expired", async () => {
    const { home, who } = await loginThroughBrowser();
    const before = profileOf(home);
    const part = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
    const forged = `${part({ alg: "HS256" })}.${part({ exp: Math.floor(Date.now() / 1000) + 3600 })}.c2ln`;
    writeFileSync(join(home, "keyward/profile.json"), JSON.stringify({ ...before, token: forged }));
    const whoami = await keyward(["whoami"], { configDir: home });
    expect(whoami.code, whoami.stderr).toBe(0);
    expect(whoami.stdout).toContain(`person: ${who.email}`);
    expect(profileOf(home).refreshToken).not.toBe(before.refreshToken);
  });

  it("logs in with --no-browser from a pasted code", async () => {
    const home = configHome();
    const who = person();
    // The console's side, begun without a loopback listener.
    const { jar } = await signInInBrowser(`${url()}/api/v1/sso/oidc/login?orgSlug=${inject("orgSlug")}`, who);
    const session = await cliSession(jar);
    const code = Buffer.from(JSON.stringify(handoffJson(session))).toString("base64");

    const login = await keyward(["login", "--url", url(), "--org", inject("orgSlug"), "--no-browser"], {
      configDir: home,
      input: `${code}\n`,
    });
    expect(login.code, login.stderr).toBe(0);
    expect(login.stderr).toContain(`${url()}/login/cli?org=${inject("orgSlug")}`);
    expect(login.stderr).toContain(`Logged in as ${who.email}`);
    expect(profileOf(home)).toMatchObject({ method: "user", email: who.email });
    const whoami = await keyward(["whoami"], { configDir: home });
    expect(whoami.stdout).toContain(`person: ${who.email}`);
  });

  it("refuses a pasted code that is not one, and asks for the organization when --org is missing", async () => {
    const bad = await keyward(["login", "--url", url(), "--org", inject("orgSlug"), "--no-browser"], {
      input: "bm90IGEgY29kZQ==\n",
    });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("not a sign-in code");
    const noOrg = await keyward(["login", "--url", url(), "--no-browser"], { input: "" });
    expect(noOrg.code).toBe(1);
    expect(noOrg.stderr).toContain("Organization slug:");
    expect(noOrg.stderr).toContain("--org");
  });

  it("logout ends the session on the server: the refresh token stops working", async () => {
    const { home } = await loginThroughBrowser();
    const { refreshToken, token } = profileOf(home);
    const logout = await keyward(["logout"], { configDir: home });
    expect(logout.code, logout.stderr).toBe(0);
    expect(() => statSync(join(home, "keyward/profile.json"))).toThrow();
    const renew = await fetch(`${url()}/api/v1/auth/token`, {
      method: "POST",
      headers: { cookie: `jid=${refreshToken}` },
    });
    expect(renew.status).toBe(401);
    const check = await fetch(`${url()}/api/v1/auth/checkAuth`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
    });
    expect(check.status).toBe(401);
  });
});
