import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { InfisicalSDK } from "@infisical/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app";
import { createTenant, expectOk, type Tenant } from "../helpers/tenant";
import { createTestCa, signSigV4, startSts, type TestCa } from "../services/workload-peers";
import {
  MISSING_UUID,
  createBareIdentity,
  createProjectOwnedIdentity,
  createUnprivileged,
  claimTemplateProbe,
} from "./helpers";

const ACCOUNT = "111122223333";
const CALLERS = {
  AKIDUSER: {
    secretAccessKey: "user-secret",
    arn: `arn:aws:iam::${ACCOUNT}:user/ci/deployer`,
    account: ACCOUNT,
    userId: "AIDAUSER",
  },
  AKIDROLE: {
    secretAccessKey: "role-secret",
    arn: `arn:aws:sts::${ACCOUNT}:assumed-role/app-runner/i-0abc`,
    account: ACCOUNT,
    userId: "AROAROLE:i-0abc",
  },
  AKIDOTHER: {
    secretAccessKey: "other-secret",
    arn: "arn:aws:iam::444455556666:user/deployer",
    account: "444455556666",
    userId: "AIDAOTHER",
  },
};
const REGION = "eu-west-1";
const BODY = "Action=GetCallerIdentity&Version=2011-06-15";

let ca: TestCa;
let sts: Awaited<ReturnType<typeof startSts>>;
let app: TestApp;
/** The variables this file changes, put back one by one after (replacing `process.env` itself would cut it off from the process's real environment, which native libraries read). */
const savedEnv = Object.fromEntries(
  ["AWS_REGION", "AWS_PROFILE", "AWS_SESSION_TOKEN"].map((name) => [name, process.env[name]]),
);

beforeAll(async () => {
  ca = await createTestCa();
  sts = await startSts(ca, CALLERS);
  const caFile = join(mkdtempSync(join(tmpdir(), "keyward-sts-")), "ca.pem");
  writeFileSync(caFile, ca.caPem);
  // Documented configuration only: the STS endpoint field, and the extra CA for outbound calls.
  app = await startTestApp({ OUTBOUND_EXTRA_CA_FILE: caFile });
  process.env.AWS_REGION = REGION;
  delete process.env.AWS_PROFILE;
  delete process.env.AWS_SESSION_TOKEN;
});
afterAll(async () => {
  for (const [name, value] of Object.entries(savedEnv)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  await sts.close();
  await app.close();
});

const attach = async (tenant: Tenant, body: Record<string, unknown> = {}) => {
  const identity = await createBareIdentity(tenant);
  const { identityAwsAuth } = expectOk(
    await tenant.admin.awsAuth.attach({
      params: { identityId: identity.id },
      body: { stsEndpoint: `${sts.url}/`, ...body },
    }),
  );
  return { identity, config: identityAwsAuth };
};

/** What @infisical/sdk sends, signed with the default credential chain (environment keys). */
const sdkLogin = async (identityId: string, accessKeyId: keyof typeof CALLERS, secret?: string) => {
  process.env.AWS_ACCESS_KEY_ID = accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = secret ?? CALLERS[accessKeyId].secretAccessKey;
  const sdk = new InfisicalSDK({ siteUrl: app.baseUrl });
  await sdk.auth().awsIamAuth.login({ identityId });
  return sdk.auth().getAccessToken();
};

/** The Go SDK's shape, with headers of the test's choosing (an Accept asking STS for XML). */
const goLogin = (tenant: Tenant, identityId: string, extra: Record<string, string> = {}) => {
  const headers = signSigV4(
    {
      method: "POST",
      host: `sts.${REGION}.amazonaws.com`,
      body: BODY,
      headers: { "Content-Type": "application/x-www-form-urlencoded; charset=utf-8", ...extra },
    },
    { accessKeyId: "AKIDUSER", secretAccessKey: CALLERS.AKIDUSER.secretAccessKey, region: REGION },
  );
  return tenant.anonymous.awsAuth.login({
    body: {
      identityId,
      iamHttpRequestMethod: "POST",
      iamRequestBody: Buffer.from(BODY).toString("base64"),
      iamRequestHeaders: Buffer.from(JSON.stringify({ ...headers, "Content-Length": String(BODY.length) })).toString(
        "base64",
      ),
    },
  });
};

describe("AWS IAM auth configuration", () => {
  it("attaches with the reference's defaults, reads, updates and deletes with its tokens", async () => {
    const tenant = await createTenant(app);
    const identity = await createBareIdentity(tenant);
    const { identityAwsAuth } = expectOk(
      await tenant.admin.awsAuth.attach({
        params: { identityId: identity.id },
        body: {
          allowedAccountIds: `${ACCOUNT} ,444455556666`,
          allowedPrincipalArns: `arn:aws:iam::${ACCOUNT}:role/app-*`,
        },
      }),
    );
    expect(identityAwsAuth).toMatchObject({
      identityId: identity.id,
      type: "iam",
      stsEndpoint: "https://sts.amazonaws.com/",
      allowedAccountIds: `${ACCOUNT}, 444455556666`,
      allowedPrincipalArns: `arn:aws:iam::${ACCOUNT}:role/app-*`,
      accessTokenTTL: 2_592_000,
      accessTokenMaxTTL: 2_592_000,
      accessTokenNumUsesLimit: 0,
    });
    expect(expectOk(await tenant.admin.awsAuth.get({ params: { identityId: identity.id } })).identityAwsAuth).toEqual(
      identityAwsAuth,
    );
    const updated = expectOk(
      await tenant.admin.awsAuth.update({ params: { identityId: identity.id }, body: { stsEndpoint: `${sts.url}/` } }),
    ).identityAwsAuth;
    expect(updated).toMatchObject({ stsEndpoint: `${sts.url}/`, allowedAccountIds: `${ACCOUNT}, 444455556666` });
    const token = await sdkLogin(identity.id, "AKIDROLE");
    expect((await app.client(token!).identities.get({ params: { identityId: identity.id } })).status).toBe(403);
    expect(
      expectOk(await tenant.admin.awsAuth.revoke({ params: { identityId: identity.id } })).identityAwsAuth.id,
    ).toBe(identityAwsAuth.id);
    expect((await app.client(token!).identities.get({ params: { identityId: identity.id } })).status).toBe(401);
  });

  it("validates account ids, ARNs and max TTL, and answers the reference's errors", async () => {
    const tenant = await createTenant(app);
    const { identity } = await attach(tenant);
    const bare = await createBareIdentity(tenant);
    const body = (b: Record<string, unknown>) => ({ params: { identityId: bare.id }, body: b });
    expect(await tenant.admin.awsAuth.attach(body({ allowedAccountIds: "12345" }))).toMatchObject({
      status: 422,
      body: { message: [{ message: "Each account ID must be a 12-digit number." }] },
    });
    expect((await tenant.admin.awsAuth.attach(body({ allowedPrincipalArns: "arn:aws:s3:::bucket" }))).status).toBe(422);
    expect((await tenant.admin.awsAuth.attach(body({ accessTokenMaxTTL: 0, accessTokenTTL: 0 }))).status).toBe(422);
    expect(await tenant.admin.awsAuth.attach(body({ stsEndpoint: "https://169.254.169.254/" }))).toMatchObject({
      status: 400,
      body: { message: "Local IPs not allowed as URL" },
    });
    expect(await tenant.admin.awsAuth.attach({ params: { identityId: identity.id }, body: {} })).toMatchObject({
      status: 400,
      body: { message: "Failed to add AWS Auth to already configured identity" },
    });
    expect(await tenant.admin.awsAuth.get({ params: { identityId: bare.id } })).toMatchObject({ status: 400 });
    expect(await tenant.admin.awsAuth.update(body({}))).toMatchObject({
      status: 400,
      body: { message: "Failed to update AWS Auth" },
    });
    const other = await createTenant(app);
    expect((await other.admin.awsAuth.get({ params: { identityId: identity.id } })).status).toBe(404);
  });

  it("refuses callers without permission (403)", async () => {
    const tenant = await createTenant(app);
    const { identity } = await attach(tenant);
    const bare = await createBareIdentity(tenant);
    const outsider = await createUnprivileged(tenant);
    expect((await outsider.client.awsAuth.attach({ params: { identityId: bare.id }, body: {} })).status).toBe(403);
    expect((await outsider.client.awsAuth.get({ params: { identityId: identity.id } })).status).toBe(403);
    expect((await outsider.client.awsAuth.update({ params: { identityId: identity.id }, body: {} })).status).toBe(403);
    expect((await outsider.client.awsAuth.revoke({ params: { identityId: identity.id } })).status).toBe(403);
    const { project, identity: owned } = await createProjectOwnedIdentity(tenant);
    expectOk(await tenant.admin.awsAuth.attach({ params: { identityId: owned.id }, body: {} }));
    const member = await createUnprivileged(tenant, project.id);
    expect((await member.client.awsAuth.revoke({ params: { identityId: owned.id } })).status).toBe(403);
  });
});

describe("AWS IAM auth login", () => {
  it("accepts @infisical/sdk awsIamAuth.login unchanged, forwarding the signed request with its Host to the configured STS", async () => {
    const tenant = await createTenant(app);
    const { identity } = await attach(tenant, {
      allowedAccountIds: ACCOUNT,
      allowedPrincipalArns: `arn:aws:iam::${ACCOUNT}:user/deployer, arn:aws:iam::${ACCOUNT}:role/app-*`,
      accessTokenTTL: 900,
    });
    expect(await sdkLogin(identity.id, "AKIDUSER")).toBeTruthy();
    expect(sts.hosts.at(-1)).toBe(`sts.${REGION}.amazonaws.com`);
    expect(await sdkLogin(identity.id, "AKIDROLE")).toBeTruthy();
    const claims = await app.deps.db
      .selectFrom("identity_access_token_claims as c")
      .innerJoin("identity_access_tokens as t", "t.id", "c.token_id")
      .select(["c.claims", "t.access_token_ttl"])
      .where("t.identity_id", "=", identity.id)
      .execute();
    expect(claims).toEqual(
      expect.arrayContaining([
        {
          access_token_ttl: 900,
          claims: {
            accountId: ACCOUNT,
            arn: CALLERS.AKIDROLE.arn,
            userId: CALLERS.AKIDROLE.userId,
            partition: "aws",
            service: "sts",
            resourceType: "assumed-role",
            resourceName: "app-runner",
          },
        },
      ]),
    );
  });

  it("reads STS's XML answer to a Go-SDK-shaped request", async () => {
    const tenant = await createTenant(app);
    const { identity } = await attach(tenant);
    const res = expectOk(await goLogin(tenant, identity.id, { Accept: "text/xml" }));
    expect(res).toMatchObject({ tokenType: "Bearer", expiresIn: 2_592_000 });
  });

  it("refuses other accounts and principals, bad signatures, bad regions and unknown identities", async () => {
    const tenant = await createTenant(app);
    const { identity } = await attach(tenant, {
      allowedAccountIds: ACCOUNT,
      allowedPrincipalArns: `arn:aws:iam::${ACCOUNT}:role/app-*`,
    });
    const attempt = (key: keyof typeof CALLERS, secret?: string) =>
      sdkLogin(identity.id, key, secret).then(
        () => undefined,
        (error: Error) => error.message,
      );
    expect(await attempt("AKIDOTHER")).toContain("Access denied: AWS account ID not allowed.");
    expect(await attempt("AKIDUSER")).toContain(
      `Access denied: AWS principal ARN not allowed. [principal-arn=arn:aws:iam::${ACCOUNT}:user/deployer]`,
    );
    expect(await attempt("AKIDROLE", "wrong-secret")).toContain("AWS STS refused the request");
    const unsigned = await tenant.anonymous.awsAuth.login({
      body: {
        identityId: identity.id,
        iamHttpRequestMethod: "POST",
        iamRequestBody: Buffer.from(BODY).toString("base64"),
        iamRequestHeaders: Buffer.from(JSON.stringify({ Host: "sts.amazonaws.com" })).toString("base64"),
      },
    });
    expect(unsigned).toMatchObject({ status: 400, body: { message: "Invalid AWS region" } });
    const garbage = await tenant.anonymous.awsAuth.login({
      body: { identityId: identity.id, iamRequestBody: "", iamRequestHeaders: "bm90IGpzb24=" },
    });
    expect(garbage.status).toBe(400);
    expect(await goLogin(tenant, MISSING_UUID)).toMatchObject({
      status: 404,
      body: { message: "AWS auth method not found for identity, did you configure AWS auth?" },
    });
  });
});

describe("AWS auth claims in permission templates", () => {
  it("grants what {{identity.auth.aws.claims.resourceType}} names for the token's own login only", async () => {
    const tenant = await createTenant(app);
    const { identity } = await attach(tenant);
    const template = "{{identity.auth.aws.claims.resourceType}}";
    const status = await claimTemplateProbe(tenant, identity.id, template, ["user", "assumed-role"]);
    const user = (await sdkLogin(identity.id, "AKIDUSER"))!;
    const role = (await sdkLogin(identity.id, "AKIDROLE"))!;
    expect([await status(user, "user"), await status(user, "assumed-role")]).toEqual([200, 403]);
    expect([await status(role, "assumed-role"), await status(role, "user")]).toEqual([200, 403]);
  });
});
