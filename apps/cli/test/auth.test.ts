import { existsSync, mkdirSync, mkdtempSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { inject } from "vitest";
import { ok } from "@keyward/client";
import { admin, createScope, keyward, unique, url } from "./helpers";

let scope: Awaited<ReturnType<typeof createScope>>;
beforeAll(async () => {
  scope = await createScope();
});

const COMMANDS = [
  [],
  ["login"],
  ["logout"],
  ["whoami"],
  ["run"],
  ["secrets"],
  ["secrets", "list"],
  ["secrets", "get"],
  ["secrets", "set"],
  ["secrets", "delete"],
  ["export"],
  ["dynamic-secrets", "lease", "create"],
  ["dynamic-secrets", "lease", "renew"],
  ["dynamic-secrets", "lease", "revoke"],
  ["token", "renew"],
  ["token", "revoke"],
];

describe("keyward help and configuration", () => {
  it("prints usage for --help on every command", async () => {
    const results = await Promise.all(COMMANDS.map((args) => keyward([...args, "--help"])));
    results.forEach((result, i) => {
      expect(result.code, COMMANDS[i]!.join(" ")).toBe(0);
      expect(result.stdout).toContain("Usage: keyward");
    });
  });

  it("says it is not logged in when neither a profile nor KEYWARD_TOKEN exists", async () => {
    const result = await keyward(["whoami"], { env: { KEYWARD_URL: url() } });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("Not logged in");
  });

  it("says the token is wrong and prints nothing on stdout", async () => {
    const result = await keyward(["secrets", "list", ...scope.scope], {
      env: { KEYWARD_URL: url(), KEYWARD_TOKEN: "not-a-token" },
    });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("Unauthorized");
  });
});

describe("keyward login, whoami, logout", () => {
  it("logs in with universal auth, stores a 0600 profile, and whoami uses it", async () => {
    const configDir = mkdtempSync(join(tmpdir(), "keyward-cli-login-"));
    const login = await keyward(
      [
        "login",
        "--method",
        "universal-auth",
        "--url",
        url(),
        "--client-id",
        scope.clientId,
        "--client-secret",
        scope.clientSecret,
      ],
      { configDir },
    );
    expect(login.code).toBe(0);
    expect(statSync(join(configDir, "keyward/profile.json")).mode & 0o777).toBe(0o600);

    const whoami = await keyward(["whoami", "--output", "json"], { configDir });
    expect(whoami.code).toBe(0);
    const info = JSON.parse(whoami.stdout) as {
      authMethod: string;
      clientId: string;
      identity: { id: string };
      organization: { id: string };
      expiresAt: string | null;
    };
    expect(info).toMatchObject({
      authMethod: "universal-auth",
      clientId: scope.clientId,
      identity: { id: scope.identity.id },
      organization: { id: inject("orgId") },
    });
    expect(info.expiresAt).toEqual(expect.any(String));
    expect(whoami.stdout).not.toContain(scope.clientSecret);

    expect((await keyward(["logout"], { configDir })).code).toBe(0);
    expect(existsSync(join(configDir, "keyward/profile.json"))).toBe(false);
    expect((await keyward(["whoami"], { configDir, env: { KEYWARD_URL: url() } })).code).toBe(1);
  });

  it("refuses a wrong client secret with the server's message", async () => {
    const result = await keyward([
      "login",
      "--method",
      "universal-auth",
      "--url",
      url(),
      "--client-id",
      scope.clientId,
      "--client-secret",
      "wrong",
    ]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/keyward: .+/);
  });

  it("logs in with a token only when the token works", async () => {
    const configDir = mkdtempSync(join(tmpdir(), "keyward-cli-login-"));
    const good = await keyward(["login", "--method", "token", "--url", url(), "--token", scope.token], { configDir });
    expect(good.code).toBe(0);
    const whoami = await keyward(["whoami"], { configDir });
    expect(whoami.stdout).toContain("auth method: token-auth");
    expect(whoami.stdout).toContain(`identity: ${scope.identity.name} (${scope.identity.id})`);
    expect(whoami.stdout).not.toContain(scope.token);

    const bad = await keyward(["login", "--method", "token", "--url", url(), "--token", "nope"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("Unauthorized");
  });
});

describe("keyward token", () => {
  it("renews, then revokes the token, after which it is refused", async () => {
    const own = await createScope();
    const renewed = await keyward(["token", "renew", "--output", "json"], { env: own.env });
    expect(renewed.code, renewed.stderr).toBe(0);
    expect(JSON.parse(renewed.stdout)).toHaveProperty("expiresIn");

    expect((await keyward(["token", "revoke"], { env: own.env })).code).toBe(0);
    const after = await keyward(["whoami"], { env: own.env });
    expect(after.code).toBe(1);
    expect(after.stdout).toBe("");
    expect(after.stderr).toContain("Unauthorized");
  });

  it("fails renew with the server's message for a wrong token", async () => {
    const result = await keyward(["token", "renew"], { env: { KEYWARD_URL: url(), KEYWARD_TOKEN: "nope" } });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
  });
});

/** A loopback URL nothing listens on: a port the OS handed out, then closed again. */
const closedUrl = async () => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
};

describe("keyward when the server cannot be reached", () => {
  it("names the URL it tried, from KEYWARD_URL, and does not start the command", async () => {
    const nowhere = await closedUrl();
    const env = { KEYWARD_URL: nowhere, KEYWARD_TOKEN: scope.token };
    for (const args of [
      ["whoami"],
      ["secrets", "list", ...scope.scope],
      ["export", ...scope.scope],
      ["run", ...scope.scope, "--", process.execPath, "-e", "console.log('started')"],
    ]) {
      const result = await keyward(args, { env });
      expect(result.code, args.join(" ")).toBe(1);
      expect(result.stdout).toBe("");
      expect(result.stderr).toMatch(new RegExp(`^keyward: Cannot reach Keyward at ${nowhere}: .*ECONNREFUSED`));
    }
  });

  it("names the URL given to login and the URL of the stored profile", async () => {
    const nowhere = await closedUrl();
    const configDir = mkdtempSync(join(tmpdir(), "keyward-cli-login-"));
    const login = await keyward(["login", "--method", "token", "--url", nowhere, "--token", scope.token], {
      configDir,
    });
    expect(login.code).toBe(1);
    expect(login.stderr).toContain(`Cannot reach Keyward at ${nowhere}:`);
    expect(existsSync(join(configDir, "keyward/profile.json"))).toBe(false);

    mkdirSync(join(configDir, "keyward"), { mode: 0o700 });
    const profile = { url: nowhere, token: scope.token, method: "token", loggedInAt: new Date().toISOString() };
    writeFileSync(join(configDir, "keyward/profile.json"), JSON.stringify(profile), { mode: 0o600 });
    const renewed = await keyward(["token", "renew"], { configDir });
    expect(renewed.code).toBe(1);
    expect(renewed.stderr).toContain(`Cannot reach Keyward at ${nowhere}:`);
  });

  it("names a URL that has no http scheme", async () => {
    const result = await keyward(["whoami"], { env: { KEYWARD_URL: "localhost:8080", KEYWARD_TOKEN: scope.token } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("Cannot reach Keyward at localhost:8080:");
  });
});

/** A Token Auth token of a fresh identity whose tokens live `ttl` seconds (0: no TTL). */
const tokenAuthToken = async (ttl: number, usesLimit = 0) => {
  const client = admin();
  const { identity } = await ok(
    client.identities.create({ body: { name: unique("cli-ttl"), organizationId: inject("orgId"), role: "no-access" } }),
  );
  await ok(
    client.tokenAuth.attach({
      params: { identityId: identity.id },
      body: { accessTokenTTL: ttl, accessTokenMaxTTL: ttl, accessTokenNumUsesLimit: usesLimit },
    }),
  );
  const { accessToken } = await ok(client.tokenAuth.createToken({ params: { identityId: identity.id }, body: {} }));
  return accessToken;
};

const NEVER = "expires: never (this token does not expire; treat it as a master key and revoke it when replaced)";

describe("keyward whoami and token expiry", () => {
  it("marks the bootstrap token as never expiring", async () => {
    const env = { KEYWARD_URL: url(), KEYWARD_TOKEN: inject("adminToken") };
    const text = await keyward(["whoami"], { env });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout.split("\n")).toContain(NEVER);
    const json = await keyward(["whoami", "--output", "json"], { env });
    expect(JSON.parse(json.stdout)).toMatchObject({ expiresAt: null, maxExpiresAt: null, neverExpires: true });
  });

  it("marks a Token Auth token with TTL 0 as never expiring", async () => {
    const env = { KEYWARD_URL: url(), KEYWARD_TOKEN: await tokenAuthToken(0) };
    const text = await keyward(["whoami"], { env });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout.split("\n")).toContain(NEVER);
    expect(text.stdout).toContain("auth method: token-auth");
  });

  it("says a token without TTL but with a use limit ends with its uses", async () => {
    const env = { KEYWARD_URL: url(), KEYWARD_TOKEN: await tokenAuthToken(0, 5) };
    const text = await keyward(["whoami"], { env });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain("expires: when its 5 uses are spent (no TTL)\n");
    expect(text.stdout).not.toContain("never");
    const json = await keyward(["whoami", "--output", "json"], { env });
    expect(JSON.parse(json.stdout)).toMatchObject({ expiresAt: null, neverExpires: false });
  });

  it("gives the expiry of a token with a TTL and does not call it never expiring", async () => {
    const env = { KEYWARD_URL: url(), KEYWARD_TOKEN: await tokenAuthToken(600) };
    const text = await keyward(["whoami"], { env });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^expires: \d{4}-\d\d-\d\dT\S+Z \(renewable until \S+\)$/m);
    expect(text.stdout).not.toContain("never");
    const json = await keyward(["whoami", "--output", "json"], { env });
    expect(JSON.parse(json.stdout)).toMatchObject({ expiresAt: expect.any(String), neverExpires: false });
  });
});
