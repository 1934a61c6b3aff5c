import { Agent } from "node:https";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAzureFake, type AzureFake } from "./azure-destination";
import { createJsonClient, type Answer, type Json } from "./https-json";
import { createTestCa, type TestCa } from "./workload-peers";

const TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47";
const CLIENT = { tenantId: TENANT, clientId: "0b1c2d3e-aaaa-bbbb-cccc-123456789abc", clientSecret: "app~secret.value" };
const VAULT_SCOPE = "https://vault.azure.net/.default";

let ca: TestCa;
let agent: Agent;
let azure: AzureFake;

beforeAll(async () => {
  ca = await createTestCa();
  agent = new Agent({ ca: ca.caPem });
  azure = await startAzureFake(ca, CLIENT);
});
afterAll(async () => {
  await azure.close();
  agent.destroy();
});

const { call, postForm, withToken } = createJsonClient(() => agent);

describe("Azure Key Vault fake", () => {
  let token: string;
  const v = (path: string, query = "") => `${azure.url}${path}?api-version=7.3${query}`;
  const tokenFields = (o: Partial<Record<"client_id" | "client_secret" | "scope" | "grant_type", string>> = {}) => ({
    grant_type: "client_credentials",
    client_id: CLIENT.clientId,
    client_secret: CLIENT.clientSecret,
    scope: VAULT_SCOPE,
    ...o,
  });
  type Bundle = { value?: string; id: string; attributes: { enabled: boolean; created: number; updated: number } };
  type Deleted = Bundle & { recoveryId: string; deletedDate: number };
  type Listing<T> = { value: T[]; nextLink: string | null };

  it("gives a token for the app's secret and the vault's scope", async () => {
    const answer = await postForm(azure.tokenUrl, tokenFields());
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ token_type: "Bearer", expires_in: 3599 });
    token = answer.body.access_token as string;
    const basic = Buffer.from(`${CLIENT.clientId}:${CLIENT.clientSecret}`).toString("base64");
    const viaBasic = await postForm(
      azure.tokenUrl,
      { grant_type: "client_credentials", scope: VAULT_SCOPE },
      {
        authorization: `Basic ${basic}`,
      },
    );
    expect(viaBasic.status).toBe(200);
    expect(azure.tokensIssued).toBe(2);
  });

  it("refuses other credentials, scopes and tenants as Entra does", async () => {
    const wrongSecret = await postForm(azure.tokenUrl, tokenFields({ client_secret: "guess" }));
    expect(wrongSecret.status).toBe(401);
    expect(wrongSecret.body).toMatchObject({ error: "invalid_client", error_codes: [7000215] });
    expect(wrongSecret.body.error_description).toMatch(/^AADSTS7000215: Invalid client secret provided\./);
    const scope = await postForm(azure.tokenUrl, tokenFields({ scope: "https://management.azure.com/.default" }));
    expect(scope).toMatchObject({ status: 400, body: { error: "invalid_scope" } });
    const tenant = await postForm(`${azure.url}/common-other/oauth2/v2.0/token`, tokenFields());
    expect(tenant).toMatchObject({ status: 400, body: { error: "invalid_request", error_codes: [90002] } });
    const client = await postForm(azure.tokenUrl, tokenFields({ client_id: "11111111-2222-3333-4444-555555555555" }));
    expect(client).toMatchObject({ status: 400, body: { error: "unauthorized_client" } });
    const noSecret = await postForm(azure.tokenUrl, {
      grant_type: "client_credentials",
      client_id: CLIENT.clientId,
      scope: VAULT_SCOPE,
    });
    expect(noSecret).toMatchObject({ status: 401, body: { error: "invalid_client" } });
    const grant = await postForm(azure.tokenUrl, tokenFields({ grant_type: "password" }));
    expect(grant).toMatchObject({ status: 400, body: { error: "unsupported_grant_type" } });
    expect(azure.tokensIssued).toBe(2);
  });

  it("wants api-version 7.3 and a token it gave, with the challenge clients follow", async () => {
    const missing = await withToken(`${azure.url}/secrets`, token);
    expect(missing).toMatchObject({ status: 400, body: { error: { code: "BadParameter" } } });
    expect((await withToken(`${azure.url}/secrets?api-version=2016-10-01`, token)).status).toBe(400);
    const anonymous = await call(v("/secrets"));
    expect(anonymous).toMatchObject({ status: 401, body: { error: { code: "Unauthorized" } } });
    expect(anonymous.headers["www-authenticate"]).toBe(
      `Bearer authorization="${azure.url}/${TENANT}", resource="https://vault.azure.net"`,
    );
    expect(await withToken(v("/secrets"), "forged")).toMatchObject({
      status: 401,
      body: { error: { code: "Unauthorized" } },
    });
  });

  it("sets versions, reads the latest or a given one, by case-insensitive name", async () => {
    const first = await withToken<Bundle>(v("/secrets/Db-Password"), token, "PUT", { value: "one" });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ value: "one", attributes: { enabled: true } });
    expect(first.body.id).toMatch(new RegExp(`^${azure.url}/secrets/Db-Password/[0-9a-f]{32}$`));
    const second = await withToken<Bundle>(v("/secrets/db-password"), token, "PUT", { value: "two" });
    expect(second.body.id).not.toBe(first.body.id);
    expect(azure.secrets.get("Db-Password")?.versions).toEqual(["one", "two"]);
    expect(azure.latest("DB-PASSWORD")).toBe("two");

    expect((await withToken<Bundle>(v("/secrets/db-password"), token)).body).toMatchObject({
      value: "two",
      id: second.body.id,
    });
    expect((await withToken<Bundle>(v("/secrets/db-password/"), token)).body.value).toBe("two");
    const version = first.body.id.split("/").at(-1)!;
    expect((await withToken<Bundle>(v(`/secrets/db-password/${version}`), token)).body.value).toBe("one");

    const absent = await withToken(v("/secrets/nothing-here"), token);
    expect(absent.status).toBe(404);
    expect(absent.body).toMatchObject({ error: { code: "SecretNotFound" } });
    expect((absent.body.error as Json).message).toMatch(
      /^A secret with \(name\/id\) nothing-here was not found in this key vault\./,
    );
    expect((await withToken(v(`/secrets/db-password/${"0".repeat(32)}`), token)).status).toBe(404);
    for (const name of ["under_score", "x".repeat(128)])
      expect(await withToken(v(`/secrets/${name}`), token, "PUT", { value: "x" })).toMatchObject({
        status: 400,
        body: { error: { code: "BadParameter" } },
      });
    expect((await withToken(v("/secrets/no-value"), token, "PUT", { other: 1 })).status).toBe(400);

    azure.seed("seeded", "planted");
    expect((await withToken<Bundle>(v("/secrets/seeded"), token)).body.value).toBe("planted");
    azure.secrets.get("seeded")!.enabled = false;
    expect(await withToken(v("/secrets/seeded"), token)).toMatchObject({
      status: 403,
      body: { error: { code: "Forbidden" } },
    });
  });

  it("soft-deletes: the name is refused until recovered, then takes new values", async () => {
    azure.seed("api-key", "kept");
    const deleted = await withToken<Deleted>(v("/secrets/api-key"), token, "DELETE");
    expect(deleted.status).toBe(200);
    expect(deleted.body.recoveryId).toBe(`${azure.url}/deletedsecrets/api-key`);
    expect(deleted.body.value).toBeUndefined();
    expect(azure.secrets.get("api-key")?.deletedAt).toBeInstanceOf(Date);
    expect((await withToken(v("/secrets/api-key"), token)).status).toBe(404);
    expect((await withToken(v("/secrets/api-key"), token, "DELETE")).status).toBe(404);

    const conflict = await withToken(v("/secrets/api-key"), token, "PUT", { value: "new" });
    expect(conflict.status).toBe(409);
    expect(conflict.body).toEqual({
      error: {
        code: "Conflict",
        message:
          "Secret api-key is currently in a deleted but recoverable state, and its name cannot be reused; in this state, the secret can only be recovered or purged.",
        innererror: { code: "ObjectIsDeletedButRecoverable" },
      },
    });
    const listed = await withToken<Listing<Deleted>>(v("/deletedsecrets"), token);
    expect(listed.body.value.map((s) => s.recoveryId)).toContain(`${azure.url}/deletedsecrets/api-key`);
    expect((await withToken<Deleted>(v("/deletedsecrets/api-key"), token)).body.id).toMatch(/\/secrets\/api-key\//);

    expect((await withToken(v("/deletedsecrets/api-key/recover"), token, "POST")).status).toBe(200);
    expect((await withToken<Bundle>(v("/secrets/api-key"), token)).body.value).toBe("kept");
    expect((await withToken(v("/deletedsecrets/api-key/recover"), token, "POST")).status).toBe(404);
    expect((await withToken(v("/secrets/api-key"), token, "PUT", { value: "new" })).status).toBe(200);
    expect(azure.latest("api-key")).toBe("new");

    await withToken(v("/secrets/api-key"), token, "DELETE");
    expect((await withToken(v("/deletedsecrets/api-key"), token, "DELETE")).status).toBe(204);
    expect(azure.secrets.has("api-key")).toBe(false);
    expect((await withToken(v("/secrets/api-key"), token, "PUT", { value: "fresh" })).status).toBe(200);
    expect(azure.secrets.get("api-key")?.versions).toEqual(["fresh"]);
  });

  it("lists live secrets 25 at a time, following nextLink", async () => {
    azure.secrets.clear();
    const names = Array.from({ length: 60 }, (_, i) => `s-${String(i).padStart(2, "0")}`);
    for (const name of names) azure.seed(name, `value-${name}`);
    azure.secrets.get("s-59")!.deletedAt = new Date();
    const seen: string[] = [];
    const sizes: number[] = [];
    let link: string | null = v("/secrets");
    while (link) {
      const page: Answer<Listing<{ id: string; value?: string; attributes: Json }>> = await withToken(link, token);
      expect(page.status).toBe(200);
      expect(page.body.value.every((s) => s.value === undefined && s.attributes.enabled === true)).toBe(true);
      seen.push(...page.body.value.map((s) => s.id));
      sizes.push(page.body.value.length);
      link = page.body.nextLink;
    }
    expect(sizes).toEqual([25, 25, 9]);
    expect(seen).toEqual(names.slice(0, 59).map((name) => `${azure.url}/secrets/${name}`));
    const small = await withToken<Listing<Json>>(v("/secrets", "&maxresults=10"), token);
    expect(small.body.value).toHaveLength(10);
    expect(small.body.nextLink).toMatch(/maxresults=10/);
    expect((await withToken(v("/secrets", "&maxresults=26"), token)).status).toBe(400);
    expect((await withToken(v("/secrets", "&$skiptoken=%%%"), token)).status).toBe(400);
    expect(azure.calls).toContainEqual({ method: "GET", path: "/secrets" });
  });

  it("answers 500s, or refuses every credential, as told", async () => {
    azure.setMode("500");
    expect(await withToken(v("/secrets"), token)).toMatchObject({
      status: 500,
      body: { error: { code: "InternalServerError" } },
    });
    expect((await postForm(azure.tokenUrl, tokenFields())).status).toBe(500);
    azure.setMode("unauthorized");
    expect((await withToken(v("/secrets"), token)).status).toBe(401);
    expect(await postForm(azure.tokenUrl, tokenFields())).toMatchObject({
      status: 401,
      body: { error: "invalid_client" },
    });
    azure.setMode("ok");
    expect((await withToken(v("/secrets"), token)).status).toBe(200);
    azure.expireTokens();
    expect((await withToken(v("/secrets"), token)).status).toBe(401);
  });
});
