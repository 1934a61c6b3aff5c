import type { IncomingHttpHeaders } from "node:http";
import { Agent, request } from "node:https";
import * as SM from "@aws-sdk/client-secrets-manager";
import * as SSM from "@aws-sdk/client-ssm";
import { GetCallerIdentityCommand, STSClient } from "@aws-sdk/client-sts";
import sodium from "libsodium-wrappers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAwsFake, type AwsFake } from "./aws-destinations";
import { envScope, orgScope, repoScope, startGitHubFake, type GitHubFake } from "./github-destination";
import { createTestCa, signSigV4, type TestCa } from "./workload-peers";

const REGION = "eu-central-1";
const ACCOUNT = "111122223333";
const KEY = { accessKeyId: "AKIDSYNC", secretAccessKey: "sync-secret-key" };
const CALLER = { secretAccessKey: KEY.secretAccessKey, account: ACCOUNT, arn: `arn:aws:iam::${ACCOUNT}:user/sync` };
const TOKEN = "ghp_syncToken123";
const REPOSITORIES = [
  { owner: "acme", repo: "api", environments: ["production"] },
  { owner: "acme", repo: "paged" },
];

let ca: TestCa;
let aws: AwsFake;
let github: GitHubFake;
let agent: Agent;

beforeAll(async () => {
  ca = await createTestCa();
  agent = new Agent({ ca: ca.caPem });
  [aws, github] = await Promise.all([
    startAwsFake(ca, { region: REGION, callers: { [KEY.accessKeyId]: { ...CALLER, userId: "AIDASYNC" } } }),
    startGitHubFake(ca, { token: TOKEN, repositories: REPOSITORIES, orgs: ["acme"] }),
    sodium.ready,
  ]);
});
afterAll(async () => {
  await Promise.all([aws.close(), github.close()]);
  agent.destroy();
});

type Signer = { accessKeyId?: string; secretAccessKey?: string; region?: string; clockOffset?: number };
/** The SDK clients' configuration against the fake: its endpoint and CA, one attempt, these credentials. */
const awsConfig = (o: Signer = {}) => ({
  endpoint: aws.url,
  region: o.region ?? REGION,
  credentials: {
    accessKeyId: o.accessKeyId ?? KEY.accessKeyId,
    secretAccessKey: o.secretAccessKey ?? KEY.secretAccessKey,
  },
  requestHandler: { httpsAgent: agent },
  maxAttempts: 1,
  systemClockOffset: o.clockOffset ?? 0,
});
const sm = (o?: Signer) => new SM.SecretsManagerClient(awsConfig(o));
const ssm = (o?: Signer) => new SSM.SSMClient(awsConfig(o));
const sts = (o?: Signer) => new STSClient(awsConfig(o));

/** Expects `sent` to fail with this error name (and message). */
const fails = (sent: Promise<unknown>, name: string, message?: string | RegExp) =>
  expect(sent).rejects.toMatchObject(message === undefined ? { name } : { name, message });

/** Every name over all the pages `fetchPage` gives, following its next-page token. */
const allPages = async (fetchPage: (token?: string) => Promise<{ names: string[]; next?: string }>) => {
  const names: string[] = [];
  let token: string | undefined;
  do {
    const page = await fetchPage(token);
    names.push(...page.names);
    token = page.next;
  } while (token);
  return names;
};

/** One HTTPS request trusting the test CA: status, headers and the parsed JSON body. */
const call = <T = Record<string, unknown>>(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
) =>
  new Promise<{ status: number; headers: IncomingHttpHeaders; body: T }>((resolve, reject) => {
    const req = request(url, { method: init.method ?? "GET", agent, headers: init.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        const body = (text ? JSON.parse(text) : undefined) as T;
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
      });
    });
    req.on("error", reject);
    req.end(init.body);
  });

describe("AWS Secrets Manager fake", () => {
  it("round-trips every operation a sync uses, by name and by ARN", async () => {
    const client = sm();
    const tags = [{ Key: "team", Value: "a" }];
    const create = new SM.CreateSecretCommand({
      Name: "app/db",
      SecretString: "v1",
      KmsKeyId: "alias/sync",
      Tags: tags,
    });
    const created = await client.send(create);
    expect(created.ARN).toMatch(new RegExp(`^arn:aws:secretsmanager:${REGION}:${ACCOUNT}:secret:app/db-.{6}$`));
    expect(aws.secrets.get("app/db")).toMatchObject({
      value: "v1",
      kmsKeyId: "alias/sync",
      versionId: created.VersionId,
    });
    expect((await client.send(new SM.GetSecretValueCommand({ SecretId: created.ARN }))).SecretString).toBe("v1");
    await fails(client.send(create), "ResourceExistsException");

    const put = await client.send(new SM.PutSecretValueCommand({ SecretId: "app/db", SecretString: "v2" }));
    expect(put.VersionId).not.toBe(created.VersionId);
    const rekeyed = await client.send(new SM.UpdateSecretCommand({ SecretId: "app/db", KmsKeyId: "alias/other" }));
    expect(rekeyed.VersionId).toBeUndefined();
    await client.send(new SM.UpdateSecretCommand({ SecretId: "app/db", SecretString: "v3" }));
    const more = [...tags, { Key: "env", Value: "prod" }];
    await client.send(new SM.TagResourceCommand({ SecretId: "app/db", Tags: more }));
    await client.send(new SM.UntagResourceCommand({ SecretId: created.ARN, TagKeys: ["team"] }));
    const described = await client.send(new SM.DescribeSecretCommand({ SecretId: "app/db" }));
    expect(described).toMatchObject({ Name: "app/db", KmsKeyId: "alias/other", Tags: [{ Key: "env", Value: "prod" }] });
    expect(described.LastChangedDate).toBeInstanceOf(Date);

    const batch = await client.send(new SM.BatchGetSecretValueCommand({ SecretIdList: ["app/db", "app/missing"] }));
    expect(batch.SecretValues?.map((v) => [v.Name, v.SecretString])).toEqual([["app/db", "v3"]]);
    expect(batch.Errors).toMatchObject([{ SecretId: "app/missing", ErrorCode: "ResourceNotFoundException" }]);
    const ids = Array.from({ length: 21 }, (_, i) => `id-${i}`);
    await fails(client.send(new SM.BatchGetSecretValueCommand({ SecretIdList: ids })), "ValidationException");
  });

  it("schedules, refuses, restores and force-deletes as Secrets Manager does", async () => {
    const client = sm();
    const id = { SecretId: "app/old" };
    aws.seedSecret("app/old", "old-value");
    await fails(
      client.send(new SM.DeleteSecretCommand({ ...id, RecoveryWindowInDays: 3 })),
      "InvalidParameterException",
    );
    const deleted = await client.send(new SM.DeleteSecretCommand({ ...id, RecoveryWindowInDays: 7 }));
    expect(deleted.DeletionDate!.getTime() - Date.now()).toBeGreaterThan(6.9 * 86_400_000);
    expect(aws.secrets.get("app/old")?.deletedAt).toBeInstanceOf(Date);
    const marked = "You can't perform this operation on the secret because it was marked for deletion.";
    await fails(client.send(new SM.GetSecretValueCommand(id)), "InvalidRequestException", marked);
    const scheduled = "You can't create this secret because a secret with this name is already scheduled for deletion.";
    const recreate = new SM.CreateSecretCommand({ Name: "app/old", SecretString: "x" });
    await fails(client.send(recreate), "InvalidRequestException", scheduled);
    const names = async (IncludePlannedDeletion: boolean) =>
      (await client.send(new SM.ListSecretsCommand({ IncludePlannedDeletion }))).SecretList?.map((s) => s.Name);
    expect(await names(false)).not.toContain("app/old");
    expect(await names(true)).toContain("app/old");
    expect((await client.send(new SM.DescribeSecretCommand(id))).DeletedDate).toBeInstanceOf(Date);

    await client.send(new SM.RestoreSecretCommand(id));
    expect((await client.send(new SM.GetSecretValueCommand(id))).SecretString).toBe("old-value");
    await client.send(new SM.DeleteSecretCommand({ ...id, ForceDeleteWithoutRecovery: true }));
    expect(aws.secrets.has("app/old")).toBe(false);
    const unknown = "Secrets Manager can't find the specified secret.";
    await fails(client.send(new SM.GetSecretValueCommand(id)), "ResourceNotFoundException", unknown);
  });

  it("pages ListSecrets with MaxResults and NextToken", async () => {
    const client = sm();
    for (let i = 0; i < 7; i++) aws.seedSecret(`paged/s${i}`, `v${i}`);
    const seen = await allPages(async (NextToken) => {
      const page = await client.send(new SM.ListSecretsCommand({ MaxResults: 3, NextToken }));
      expect(page.SecretList!.length).toBeLessThanOrEqual(3);
      expect(page.SecretList![0]?.LastChangedDate).toBeInstanceOf(Date);
      return { names: page.SecretList!.map((s) => s.Name!), next: page.NextToken };
    });
    expect(seen).toEqual([...aws.secrets.keys()].sort());
    await fails(client.send(new SM.ListSecretsCommand({ NextToken: "garbage" })), "InvalidNextTokenException");
  });
});

describe("AWS Systems Manager Parameter Store fake", () => {
  it("round-trips parameters, SecureStrings, overwrites, tags and deletes", async () => {
    const client = ssm();
    const name = "/app/prod/DB_URL";
    const put = new SSM.PutParameterCommand({ Name: name, Value: "pg://1", Type: "SecureString", KeyId: "alias/sync" });
    expect(await client.send(put)).toMatchObject({ Version: 1, Tier: "Standard" });
    await fails(client.send(put), "ParameterAlreadyExists");
    const again = { Name: name, Value: "pg://2", Type: "SecureString" as const, Overwrite: true };
    expect((await client.send(new SSM.PutParameterCommand(again))).Version).toBe(2);
    expect(aws.parameters.get(name)).toMatchObject({ value: "pg://2", type: "SecureString", version: 2 });
    const read = async (WithDecryption: boolean) =>
      (await client.send(new SSM.GetParameterCommand({ Name: name, WithDecryption }))).Parameter;
    const arn = `arn:aws:ssm:${REGION}:${ACCOUNT}:parameter${name}`;
    expect(await read(true)).toMatchObject({ Value: "pg://2", Version: 2, ARN: arn });
    expect((await read(false))?.Value).not.toContain("pg://2");

    const port = { Name: "/app/prod/PORT", Value: "5432", Type: "String" as const, Tags: [{ Key: "a", Value: "1" }] };
    await client.send(new SSM.PutParameterCommand(port));
    const many = await client.send(new SSM.GetParametersCommand({ Names: [port.Name, "/app/prod/NOPE"] }));
    expect(many.Parameters?.map((p) => p.Value)).toEqual(["5432"]);
    expect(many.InvalidParameters).toEqual(["/app/prod/NOPE"]);
    const tagged = { ResourceType: "Parameter" as const, ResourceId: port.Name };
    await client.send(new SSM.AddTagsToResourceCommand({ ...tagged, Tags: [{ Key: "b", Value: "2" }] }));
    await client.send(new SSM.RemoveTagsFromResourceCommand({ ...tagged, TagKeys: ["a"] }));
    expect((await client.send(new SSM.ListTagsForResourceCommand(tagged))).TagList).toEqual([{ Key: "b", Value: "2" }]);

    const refused = async (input: ConstructorParameters<typeof SSM.PutParameterCommand>[0]) =>
      fails(client.send(new SSM.PutParameterCommand(input)), "ValidationException");
    await refused({ ...again, Tags: [{ Key: "a", Value: "1" }] });
    await refused({ Name: "aws/reserved", Value: "x", Type: "String" });
    await refused({ Name: "/app/plain", Value: "x", Type: "String", KeyId: "alias/sync" });

    await client.send(new SSM.DeleteParameterCommand({ Name: port.Name }));
    await fails(client.send(new SSM.DeleteParameterCommand({ Name: port.Name })), "ParameterNotFound");
    const bulk = await client.send(new SSM.DeleteParametersCommand({ Names: [name, "/app/prod/NOPE"] }));
    expect(bulk).toMatchObject({ DeletedParameters: [name], InvalidParameters: ["/app/prod/NOPE"] });
  });

  it("pages GetParametersByPath and DescribeParameters, one level or recursively", async () => {
    const client = ssm();
    const direct = Array.from({ length: 12 }, (_, i) => `/paged/p${String(i).padStart(2, "0")}`);
    for (const name of [...direct, "/paged/deep/x", "/paged/deep/er/y", "/pagedother"])
      aws.parameters.set(name, { value: name, type: "String", version: 1, lastModifiedAt: new Date() });
    const byPath = (Recursive: boolean) =>
      allPages(async (NextToken) => {
        const input = { Path: "/paged", Recursive, MaxResults: 5, NextToken };
        const page = await client.send(new SSM.GetParametersByPathCommand(input));
        return { names: page.Parameters!.map((p) => p.Name!), next: page.NextToken };
      });
    expect(await byPath(false)).toEqual(direct);
    expect(await byPath(true)).toEqual([...direct, "/paged/deep/er/y", "/paged/deep/x"].sort());
    const tooMany = new SSM.GetParametersByPathCommand({ Path: "/paged", MaxResults: 11 });
    await fails(client.send(tooMany), "ValidationException");

    const described = (Option: string) =>
      allPages(async (NextToken) => {
        const ParameterFilters = [{ Key: "Path", Option, Values: ["/paged/deep"] }];
        const page = await client.send(
          new SSM.DescribeParametersCommand({ ParameterFilters, MaxResults: 1, NextToken }),
        );
        return { names: page.Parameters!.map((p) => p.Name!), next: page.NextToken };
      });
    expect(await described("OneLevel")).toEqual(["/paged/deep/x"]);
    expect(await described("Recursive")).toEqual(["/paged/deep/er/y", "/paged/deep/x"]);
  });
});

describe("AWS signatures and failure modes", () => {
  it("STS answers GetCallerIdentity for the signing key", async () => {
    const identity = await sts().send(new GetCallerIdentityCommand({}));
    expect(identity).toMatchObject({ Account: ACCOUNT, Arn: CALLER.arn, UserId: "AIDASYNC" });
    const last = { service: "sts", operation: "GetCallerIdentity", accessKeyId: KEY.accessKeyId, region: REGION };
    expect(aws.calls.at(-1)).toEqual(last);
  });

  it("refuses a wrong secret key, an unknown key id, another region, a stale clock and another service's scope", async () => {
    const [refusedBefore, callsBefore] = [aws.refused, aws.calls.length];
    const list = new SM.ListSecretsCommand({});
    const whoAmI = new GetCallerIdentityCommand({});
    await fails(sm({ secretAccessKey: "wrong" }).send(list), "InvalidSignatureException");
    const invalidToken = "The security token included in the request is invalid.";
    await fails(sm({ accessKeyId: "AKIDNOBODY" }).send(list), "UnrecognizedClientException", invalidToken);
    const elsewhere = ssm({ region: "us-west-2" }).send(new SSM.GetParameterCommand({ Name: "/x" }));
    await fails(elsewhere, "InvalidSignatureException", "Credential should be scoped to a valid region.");
    await fails(sm({ clockOffset: -20 * 60_000 }).send(list), "InvalidSignatureException", /^Signature expired/);
    await fails(sts({ secretAccessKey: "wrong" }).send(whoAmI), "SignatureDoesNotMatch");
    await fails(sts({ accessKeyId: "AKIDNOBODY" }).send(whoAmI), "InvalidClientTokenId");
    // Signed for STS but sent to Secrets Manager.
    const body = "{}";
    const headers = { "content-type": "application/x-amz-json-1.1", "x-amz-target": "secretsmanager.ListSecrets" };
    const signed = signSigV4(
      { method: "POST", host: new URL(aws.url).host, body, headers },
      { ...KEY, region: REGION },
    );
    const raw = await call(`${aws.url}/`, { method: "POST", headers: signed, body });
    const message = "Credential should be scoped to correct service: 'secretsmanager'.";
    expect(raw).toMatchObject({ status: 400, body: { __type: "InvalidSignatureException", message } });
    expect([aws.refused - refusedBefore, aws.calls.length - callsBefore]).toEqual([7, 0]);
  });

  it("answers 500s or refuses every signature when told to, per service", async () => {
    aws.setMode("secretsmanager", "500");
    const failed = sm().send(new SM.ListSecretsCommand({}));
    await expect(failed).rejects.toMatchObject({ name: "InternalFailure", $metadata: { httpStatusCode: 500 } });
    expect((await ssm().send(new SSM.DescribeParametersCommand({}))).Parameters).toBeDefined();
    aws.setMode("all", "bad-signature");
    const refused = aws.refused;
    await fails(sts().send(new GetCallerIdentityCommand({})), "SignatureDoesNotMatch");
    await fails(ssm().send(new SSM.DescribeParametersCommand({})), "InvalidSignatureException");
    expect(aws.refused - refused).toBe(2);
    aws.setMode("all", "ok");
    expect((await sm().send(new SM.ListSecretsCommand({}))).SecretList).toBeDefined();
  });
});

describe("GitHub Actions secrets fake", () => {
  const repo = "/repos/acme/api/actions/secrets";
  const env = "/repos/acme/api/environments/production/secrets";
  const org = "/orgs/acme/actions/secrets";
  const headers = (token = TOKEN) => ({
    authorization: `Bearer ${token}`,
    accept: "application/vnd.github+json",
    "user-agent": "keyward-test",
  });
  const gh = <T = Record<string, unknown>>(
    path: string,
    init: { method?: string; body?: unknown; token?: string } = {},
  ) =>
    call<T>(`${github.url}/api/v3${path}`, {
      method: init.method,
      headers: headers(init.token),
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
  /** The status of a PUT of `body` to `path`. */
  const putStatus = async (path: string, body: unknown) => (await gh(path, { method: "PUT", body })).status;
  /** Seals `value` to a scope's current key, as a client does with libsodium. */
  const seal = async (scopePath: string, value: string) => {
    const { body } = await gh<{ key_id: string; key: string }>(`${scopePath}/public-key`);
    const box = sodium.crypto_box_seal(value, sodium.from_base64(body.key, sodium.base64_variants.ORIGINAL));
    return { encrypted_value: sodium.to_base64(box, sodium.base64_variants.ORIGINAL), key_id: body.key_id };
  };

  it("checks the token and the User-Agent, and names the user", async () => {
    expect((await gh("/user")).body).toMatchObject({ login: "keyward-sync" });
    const user = `${github.url}/api/v3/user`;
    const classic = await call(user, { headers: { authorization: `token ${TOKEN}`, "user-agent": "t" } });
    expect(classic.status).toBe(200);
    expect(await gh("/user", { token: "wrong" })).toMatchObject({ status: 401, body: { message: "Bad credentials" } });
    expect((await call(user, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(403);
    expect(github.log.at(-1)?.headers.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it("opens sealed values in repository, environment and organization scopes", async () => {
    expect(await putStatus(`${repo}/db_url`, await seal(repo, "pg://one"))).toBe(201);
    expect(await putStatus(`${repo}/DB_URL`, await seal(repo, "pg://two"))).toBe(204);
    expect(github.repoSecrets("acme", "api").get("DB_URL")?.value).toBe("pg://two");
    expect(await putStatus(`${env}/TOKEN`, await seal(env, "env-value"))).toBe(201);
    expect(github.envSecrets("acme", "api", "production").get("TOKEN")?.value).toBe("env-value");
    const selected = { visibility: "selected", selected_repository_ids: [github.repositoryId("acme", "api")] };
    expect(await putStatus(`${org}/SHARED`, { ...(await seal(org, "org-value")), ...selected })).toBe(201);
    expect(github.orgSecrets("acme").get("SHARED")).toMatchObject({ value: "org-value", visibility: "selected" });
    expect(await putStatus(`${org}/NO_VISIBILITY`, await seal(org, "x"))).toBe(422);
    const scopes = [repoScope("acme", "api"), repoScope("acme", "api"), envScope("acme", "api", "production")];
    expect(github.puts.map((p) => p.scope)).toEqual([...scopes, orgScope("acme")]);

    expect((await gh(`${repo}/DB_URL`, { method: "DELETE" })).status).toBe(204);
    expect((await gh(`${repo}/DB_URL`, { method: "DELETE" })).status).toBe(404);
    expect(await gh("/repos/acme/nope/actions/secrets")).toMatchObject({ status: 404, body: { message: "Not Found" } });
    expect((await gh("/repos/acme/api/environments/staging/secrets")).status).toBe(404);
  });

  it("refuses another scope's key, a stale key id after rotation and a box it cannot open", async () => {
    expect(await putStatus(`${env}/X`, await seal(repo, "x"))).toBe(422);
    const keyId = github.publicKey(repoScope("acme", "api")).keyId;
    const garbage = { encrypted_value: Buffer.from("not a sealed box, not at all").toString("base64"), key_id: keyId };
    expect(await putStatus(`${repo}/X`, garbage)).toBe(422);
    const stale = await seal(repo, "x");
    github.rotateKey();
    expect(await putStatus(`${repo}/X`, stale)).toBe(422);
    expect(await putStatus(`${repo}/X`, await seal(repo, "x"))).toBe(201);
    expect(github.repoSecrets("acme", "api").get("X")?.value).toBe("x");
  });

  it("pages listings with Link headers, and fails on demand", async () => {
    for (const name of ["A", "B", "C", "D", "E"]) github.seed(repoScope("acme", "paged"), name, `value-${name}`);
    type Listing = { total_count: number; secrets: { name: string; updated_at: string }[] };
    const seen = await allPages(async (next = `${github.url}/api/v3/repos/acme/paged/actions/secrets?per_page=2`) => {
      const page = await call<Listing>(next, { headers: headers() });
      expect(page.body.total_count).toBe(5);
      const link = /<([^>]+)>; rel="next"/.exec(String(page.headers.link ?? ""))?.[1];
      return { names: page.body.secrets.map((s) => s.name), next: link };
    });
    expect(seen).toEqual(["A", "B", "C", "D", "E"]);
    github.setMode("500");
    expect((await gh("/user")).status).toBe(500);
    github.setMode("unauthorized");
    expect((await gh("/user")).status).toBe(401);
    github.setMode("ok");
  });
});
