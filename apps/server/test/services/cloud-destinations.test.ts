import type { IncomingHttpHeaders } from "node:http";
import { Agent, request } from "node:https";
import { SignJWT, generateKeyPair, importPKCS8, type CryptoKey } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAzureFake, type AzureFake } from "./azure-destination";
import { crc32c, startGcpFake, type GcpFake } from "./gcp-destination";
import { createTestCa, type TestCa } from "./workload-peers";

const PROJECT = "keyward-sync-test";
const SCOPE = "https://www.googleapis.com/auth/cloud-platform";
const TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47";
const CLIENT = { tenantId: TENANT, clientId: "0b1c2d3e-aaaa-bbbb-cccc-123456789abc", clientSecret: "app~secret.value" };
const VAULT_SCOPE = "https://vault.azure.net/.default";

let ca: TestCa;
let agent: Agent;
let gcp: GcpFake;
let azure: AzureFake;

beforeAll(async () => {
  ca = await createTestCa();
  agent = new Agent({ ca: ca.caPem });
  [gcp, azure] = await Promise.all([startGcpFake(ca, { projectId: PROJECT }), startAzureFake(ca, CLIENT)]);
});
afterAll(async () => {
  await Promise.all([gcp.close(), azure.close()]);
  agent.destroy();
});

type Json = Record<string, unknown>;
type Answer<T> = { status: number; headers: IncomingHttpHeaders; body: T };

/** One HTTPS request trusting the test CA: status, headers and the parsed JSON body (undefined when empty). */
const call = <T = Json>(url: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}) =>
  new Promise<Answer<T>>((resolve, reject) => {
    const req = request(url, { method: init.method ?? "GET", agent, headers: init.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: (text ? JSON.parse(text) : undefined) as T,
        });
      });
    });
    req.on("error", reject);
    req.end(init.body);
  });

/** A form POST, as OAuth token endpoints take them. */
const postForm = (url: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
  call(url, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(fields).toString(),
  });

/** A JSON request with a bearer token. */
const withToken = <T = Json>(url: string, token: string, method = "GET", body?: unknown) =>
  call<T>(url, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

describe("Google Cloud Secret Manager fake", () => {
  type Claims = { iss?: string; aud?: string; scope?: string; iat?: number; exp?: number };
  let saKey: CryptoKey;
  let token: string;
  const api = (path: string) => `${gcp.url}/v1/projects/${PROJECT}/${path}`;

  /** An assertion as Google's client libraries make it: the service account's key, its email, the token URI. */
  const assertion = async (claims: Claims = {}, key: CryptoKey = saKey, kid = gcp.serviceAccountKey.private_key_id) => {
    const now = Math.floor(Date.now() / 1000);
    const { iss, aud, scope, iat, exp } = {
      iss: gcp.serviceAccountKey.client_email,
      aud: gcp.serviceAccountKey.token_uri,
      scope: SCOPE,
      iat: now,
      exp: now + 3600,
      ...claims,
    };
    return new SignJWT({ scope })
      .setProtectedHeader({ alg: "RS256", typ: "JWT", kid })
      .setIssuer(iss)
      .setAudience(aud)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .sign(key);
  };
  const grant = async (jwt: string) =>
    postForm(gcp.serviceAccountKey.token_uri, {
      grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer",
      assertion: jwt,
    });
  const addVersion = (id: string, value: string | Buffer, extra: Json = {}) =>
    withToken(api(`secrets/${id}:addVersion`), token, "POST", {
      payload: { data: Buffer.from(value).toString("base64"), ...extra },
    });

  beforeAll(async () => {
    saKey = await importPKCS8(gcp.serviceAccountKey.private_key, "RS256");
  });

  it("describes its service account as a key file does", () => {
    expect(gcp.serviceAccountKey).toMatchObject({
      type: "service_account",
      project_id: PROJECT,
      client_email: `keyward@${PROJECT}.iam.gserviceaccount.com`,
      token_uri: `${gcp.url}/token`,
    });
    expect(gcp.serviceAccountKey.private_key).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
  });

  it("gives a token for an assertion signed by the service account's key", async () => {
    const before = gcp.tokensIssued;
    const answer = await grant(await assertion());
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ expires_in: 3599, token_type: "Bearer" });
    token = answer.body.access_token as string;
    expect(token).toMatch(/^ya29\./);
    expect(gcp.tokensIssued).toBe(before + 1);
  });

  it("refuses assertions Google would refuse, with Google's reasons", async () => {
    const now = Math.floor(Date.now() / 1000);
    const { privateKey: otherKey } = await generateKeyPair("RS256");
    const refusals: [string, Promise<string>, string, RegExp][] = [
      ["another key", assertion({}, otherKey), "invalid_grant", /^Invalid JWT Signature\.$/],
      ["an unknown kid", assertion({}, saKey, "0000"), "invalid_grant", /^Invalid JWT Signature\.$/],
      ["another audience", assertion({ aud: "https://oauth2.googleapis.com/token" }), "invalid_grant", /audience/],
      ["another issuer", assertion({ iss: `other@${PROJECT}.iam.gserviceaccount.com` }), "invalid_grant", /not found/],
      ["a lifetime over an hour", assertion({ iat: now, exp: now + 3601 }), "invalid_grant", /short-lived/],
      ["an expired assertion", assertion({ iat: now - 7200, exp: now - 3600 }), "invalid_grant", /short-lived/],
      ["an assertion from the future", assertion({ iat: now + 900, exp: now + 1800 }), "invalid_grant", /iat and exp/],
      [
        "no cloud-platform scope",
        assertion({ scope: "https://www.googleapis.com/auth/devstorage.read_only" }),
        "invalid_scope",
        /scope/,
      ],
    ];
    const before = gcp.tokensIssued;
    for (const [what, jwt, error, description] of refusals) {
      const answer = await grant(await jwt);
      expect({ what, status: answer.status, error: answer.body.error }).toEqual({ what, status: 400, error });
      expect(answer.body.error_description).toMatch(description);
    }
    const wrongGrant = await postForm(gcp.serviceAccountKey.token_uri, { grant_type: "client_credentials" });
    expect(wrongGrant).toMatchObject({ status: 400, body: { error: "unsupported_grant_type" } });
    expect(gcp.tokensIssued).toBe(before);
  });

  it("wants a token it gave, and only for its own project", async () => {
    const unauthenticated = {
      status: 401,
      body: {
        error: { code: 401, message: "Request had invalid authentication credentials.", status: "UNAUTHENTICATED" },
      },
    };
    expect(await call(api("secrets"))).toMatchObject(unauthenticated);
    expect(await withToken(api("secrets"), "ya29.forged")).toMatchObject(unauthenticated);
    const other = await withToken(`${gcp.url}/v1/projects/someone-else/secrets`, token);
    expect(other.status).toBe(403);
    expect(other.body).toEqual({
      error: {
        code: 403,
        status: "PERMISSION_DENIED",
        message:
          "Permission 'secretmanager.secrets.list' denied for resource 'projects/someone-else' (or it may not exist).",
      },
    });
  });

  it("creates secrets, adds versions, reads the latest and deletes", async () => {
    const created = await withToken(api("secrets?secretId=db-password"), token, "POST", {
      replication: { automatic: {} },
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      name: `projects/${PROJECT}/secrets/db-password`,
      replication: { automatic: {} },
    });
    expect(Date.parse(created.body.createTime as string)).not.toBeNaN();
    const again = await withToken(api("secrets?secretId=db-password"), token, "POST", {
      replication: { automatic: {} },
    });
    expect(again).toMatchObject({ status: 409, body: { error: { code: 409, status: "ALREADY_EXISTS" } } });
    for (const id of ["has.dot", "x".repeat(256), ""]) {
      const bad = await withToken(api(`secrets?secretId=${id}`), token, "POST", { replication: { automatic: {} } });
      expect(bad).toMatchObject({ status: 400, body: { error: { status: "INVALID_ARGUMENT" } } });
    }
    const noReplication = await withToken(api("secrets?secretId=norep"), token, "POST", {});
    expect(noReplication.status).toBe(400);

    const noVersion = await withToken(api("secrets/db-password/versions/latest:access"), token);
    expect(noVersion).toMatchObject({ status: 404, body: { error: { status: "NOT_FOUND" } } });
    expect(await addVersion("db-password", "first")).toMatchObject({
      status: 200,
      body: { name: `projects/${PROJECT}/secrets/db-password/versions/1`, state: "ENABLED" },
    });
    const second = await addVersion("db-password", "second ✓", { dataCrc32c: String(crc32c(Buffer.from("second ✓"))) });
    expect(second.body).toMatchObject({
      name: expect.stringMatching(/\/versions\/2$/),
      clientSpecifiedPayloadChecksum: true,
    });
    expect(gcp.secrets.get("db-password")?.versions).toEqual(["first", "second ✓"]);
    expect(gcp.latest("db-password")).toBe("second ✓");

    const latest = await withToken<{ name: string; payload: { data: string; dataCrc32c: string } }>(
      api("secrets/db-password/versions/latest:access"),
      token,
    );
    expect(latest.body.name).toBe(`projects/${PROJECT}/secrets/db-password/versions/2`);
    expect(Buffer.from(latest.body.payload.data, "base64").toString("utf8")).toBe("second ✓");
    expect(latest.body.payload.dataCrc32c).toBe(String(crc32c(Buffer.from("second ✓"))));
    const first = await withToken<{ payload: { data: string } }>(api("secrets/db-password/versions/1:access"), token);
    expect(Buffer.from(first.body.payload.data, "base64").toString("utf8")).toBe("first");
    expect((await withToken(api("secrets/db-password/versions/9:access"), token)).status).toBe(404);

    expect(await withToken(api("secrets/db-password"), token, "DELETE")).toMatchObject({ status: 200, body: {} });
    expect(await withToken(api("secrets/db-password"), token, "DELETE")).toMatchObject({
      status: 404,
      body: { error: { code: 404, status: "NOT_FOUND" } },
    });
    expect((await withToken(api("secrets/db-password/versions/latest:access"), token)).status).toBe(404);
    expect(gcp.calls).toContainEqual({
      method: "POST",
      path: `/v1/projects/${PROJECT}/secrets/db-password:addVersion`,
    });
  });

  it("checks what a version carries: a known secret, some data, at most 64 KiB, its checksum", async () => {
    const unknown = await addVersion("nowhere", "x");
    expect(unknown).toMatchObject({ status: 404, body: { error: { status: "NOT_FOUND" } } });
    gcp.seed("sized");
    expect((await addVersion("sized", "")).status).toBe(400);
    expect((await addVersion("sized", Buffer.alloc(64 * 1024 + 1, 97))).status).toBe(400);
    expect((await addVersion("sized", "value", { dataCrc32c: "12345" })).status).toBe(400);
    expect((await addVersion("sized", Buffer.alloc(64 * 1024, 97))).status).toBe(200);
    expect(gcp.secrets.get("sized")?.versions).toHaveLength(1);
    expect(crc32c(Buffer.from("123456789"))).toBe(0xe3069283);
  });

  it("lists secrets in pages of at most 250, following nextPageToken", async () => {
    gcp.secrets.clear();
    expect(await withToken(api("secrets"), token)).toMatchObject({ status: 200, body: {} });
    const ids = Array.from({ length: 260 }, (_, i) => `s-${String(i).padStart(3, "0")}`);
    for (const id of ids) gcp.seed(id, `value-${id}`);
    type Page = { secrets?: { name: string; replication: Json }[]; nextPageToken?: string; totalSize?: number };
    const full = await withToken<Page>(api("secrets?pageSize=1000"), token);
    expect(full.body.secrets).toHaveLength(250);
    expect(full.body.totalSize).toBe(260);
    const seen: string[] = [];
    let pageToken: string | undefined;
    let pages = 0;
    do {
      const query = `pageSize=100${pageToken ? `&pageToken=${pageToken}` : ""}`;
      const page = await withToken<Page>(api(`secrets?${query}`), token);
      seen.push(...(page.body.secrets ?? []).map((s) => s.name));
      pageToken = page.body.nextPageToken;
      pages += 1;
    } while (pageToken);
    expect(pages).toBe(3);
    expect(seen).toEqual(ids.map((id) => `projects/${PROJECT}/secrets/${id}`));
    expect((await withToken(api("secrets?pageToken=not-a-token!"), token)).status).toBe(400);
    expect((await withToken(api("secrets?pageSize=-1"), token)).status).toBe(400);
  });

  it("answers 500s, or refuses every credential, as told", async () => {
    gcp.setMode("500");
    expect(await withToken(api("secrets"), token)).toMatchObject({
      status: 500,
      body: { error: { status: "INTERNAL" } },
    });
    expect((await grant(await assertion())).status).toBe(500);
    gcp.setMode("unauthorized");
    expect(await withToken(api("secrets"), token)).toMatchObject({
      status: 401,
      body: { error: { status: "UNAUTHENTICATED" } },
    });
    expect(await grant(await assertion())).toMatchObject({ status: 400, body: { error: "invalid_grant" } });
    gcp.setMode("ok");
    expect((await withToken(api("secrets?pageSize=1"), token)).status).toBe(200);
    gcp.expireTokens();
    expect((await withToken(api("secrets?pageSize=1"), token)).status).toBe(401);
  });
});

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
