import { Agent } from "node:https";
import { SignJWT, generateKeyPair, importPKCS8, type CryptoKey } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { crc32c, startGcpFake, type GcpFake } from "./gcp-destination";
import { createJsonClient, type Json } from "./https-json";
import { createTestCa, type TestCa } from "./workload-peers";

const PROJECT = "keyward-sync-test";
const SCOPE = "https://www.googleapis.com/auth/cloud-platform";

let ca: TestCa;
let agent: Agent;
let gcp: GcpFake;

beforeAll(async () => {
  ca = await createTestCa();
  agent = new Agent({ ca: ca.caPem });
  gcp = await startGcpFake(ca, { projectId: PROJECT });
});
afterAll(async () => {
  await gcp.close();
  agent.destroy();
});

const { call, postForm, withToken } = createJsonClient(() => agent);

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
