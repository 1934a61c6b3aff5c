import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { createScope, keyward, url } from "./helpers";

let scope: Awaited<ReturnType<typeof createScope>>;
beforeAll(async () => {
  scope = await createScope();
});

describe("clear errors for common mistakes", () => {
  it("refuses a KEYWARD_URL or --url with a path, saying what the URL must be; a trailing slash is fine", async () => {
    const withPath = `${url()}/api`;
    const whoami = await keyward(["whoami"], { env: { ...scope.env, KEYWARD_URL: withPath } });
    expect(whoami.code).toBe(1);
    expect(whoami.stdout).toBe("");
    expect(whoami.stderr).toContain(
      `KEYWARD_URL must be the server's base URL without a path, like http://127.0.0.1:8080 (got ${withPath}`,
    );
    expect(whoami.stderr).not.toContain("Cannot read properties");

    const list = await keyward(["secrets", "list", ...scope.scope], {
      env: { ...scope.env, KEYWARD_URL: `${url()}/api/v3` },
    });
    expect(list.code).toBe(1);
    expect(list.stderr).toContain("KEYWARD_URL must be the server's base URL without a path");

    const login = await keyward(["login", "--method", "token", "--url", withPath, "--token", scope.token]);
    expect(login.code).toBe(1);
    expect(login.stderr).toContain(`--url must be the server's base URL without a path`);

    const query = await keyward(["whoami"], { env: { ...scope.env, KEYWARD_URL: `${url()}?x=1` } });
    expect(query.code).toBe(1);
    expect(query.stderr).toContain("KEYWARD_URL must be the server's base URL without a path");
    expect(query.stderr).toContain("it has a query or fragment");

    const slash = await keyward(["whoami", "--output", "json"], { env: { ...scope.env, KEYWARD_URL: `${url()}/` } });
    expect(slash.code, slash.stderr).toBe(0);
    expect(JSON.parse(slash.stdout)).toMatchObject({ url: url(), identity: { id: scope.identity.id } });
  });

  it("says a universal-auth login failed for its client id or secret, not for an access token", async () => {
    const configDir = mkdtempSync(join(tmpdir(), "keyward-cli-login-"));
    const login = (clientId: string, clientSecret: string) =>
      keyward(
        [
          "login",
          "--method",
          "universal-auth",
          "--url",
          url(),
          "--client-id",
          clientId,
          "--client-secret",
          clientSecret,
        ],
        { configDir },
      );
    const wrongSecret = await login(scope.clientId, "not-the-secret");
    expect(wrongSecret.code).toBe(1);
    expect(wrongSecret.stderr).toContain("Universal auth login failed: invalid client id or secret");
    // The server's own words are there too.
    expect(wrongSecret.stderr).toContain("Invalid credentials");
    expect(wrongSecret.stderr).not.toContain("access token");

    const wrongId = await login("00000000-0000-0000-0000-000000000000", scope.clientSecret);
    expect(wrongId.stderr).toContain("invalid client id or secret");

    // A token refused by the server says so, with the server's reason.
    const badToken = await keyward(["whoami"], { env: { KEYWARD_URL: url(), KEYWARD_TOKEN: "kw_not-a-token" } });
    expect(badToken.code).toBe(1);
    expect(badToken.stderr).toContain(
      "Unauthorized: the server refused the access token: No identity access token found",
    );

    // And the right secret still logs in.
    const good = await login(scope.clientId, scope.clientSecret);
    expect(good.code, good.stderr).toBe(0);
  });

  it("names the secret a delete did not find, and exits non-zero", async () => {
    const one = await keyward(["secrets", "delete", "NOPE", ...scope.scope], { env: scope.env });
    expect(one.code).toBe(1);
    expect(one.stdout).toBe("");
    expect(one.stderr).toContain("NOPE does not exist in dev:/; nothing was deleted");

    expect((await keyward(["secrets", "set", "THERE=1", ...scope.scope], { env: scope.env })).code).toBe(0);
    const two = await keyward(["secrets", "delete", "THERE", "MISSING", ...scope.scope], { env: scope.env });
    expect(two.code).toBe(1);
    expect(two.stderr).toContain("one or more of THERE, MISSING do not exist in dev:/; nothing was deleted");
    // All or nothing: THERE is still there.
    const got = await keyward(["secrets", "get", "THERE", "--plain", ...scope.scope], { env: scope.env });
    expect(got.stdout).toBe("1\n");
  });

  it("fails a search in an environment the project does not have", async () => {
    const projectId = ["--project-id", scope.project.id];
    const result = await keyward(["secrets", "search", "-", ...projectId, "--env", "nope"], { env: scope.env });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("--env nope: project");
    expect(result.stderr).toContain("has no such environment (it has: dev, staging, prod)");

    // An existing environment with no match is still "no secrets found", exit 0.
    const none = await keyward(["secrets", "search", "NO_SUCH_KEY", ...projectId, "--env", "dev"], { env: scope.env });
    expect(none.code).toBe(0);
    expect(none.stderr).toContain("no secrets found");
  });
});
