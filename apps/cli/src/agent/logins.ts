import { createHash, createHmac, createSign } from "node:crypto";
import { readFileSync, rmSync } from "node:fs";
import { ok, type KeywardClient } from "@keyward/client";
import { CliError } from "../config";
import { parentEnvironment } from "../env";
import type { AuthSpec, CredentialSource } from "./config";

export type Login = { accessToken: string; expiresIn: number; accessTokenMaxTTL: number };

/**
 * Reads credentials at each login, as Infisical's agent does: a file may be replaced between
 * logins (a rotated service-account token, a new client secret). A file removed on read is kept in
 * memory, so later logins (after the max TTL, after a refused renewal) still have it.
 */
export class CredentialReader {
  private readonly remembered = new Map<string, string>();

  read(source: CredentialSource, what: string, hint = true): string {
    if ("value" in source) return source.value;
    let value: string;
    try {
      value = readFileSync(source.path, "utf8").trim();
    } catch (error) {
      const kept = this.remembered.get(source.path);
      if (kept !== undefined) return kept;
      const help = hint
        ? ` (${what} names a file holding the value, as in Infisical's agent; give the value itself as ${what}-value)`
        : "";
      throw new CliError(`Cannot read ${what} from ${source.path}: ${(error as Error).message}${help}`);
    }
    if (!value) throw new CliError(`${source.path} (${what}) is empty`);
    if (source.removeOnRead) {
      this.remembered.set(source.path, value);
      rmSync(source.path, { force: true });
    }
    return value;
  }

  /** A file read as it is at each login, never removed (a token the platform rotates). */
  readPath(path: string, what: string) {
    return this.read({ path }, what, false);
  }

  /** For a reload: what this reader remembered of files removed on read. */
  inherit(from: CredentialReader) {
    for (const [path, value] of from.remembered) this.remembered.set(path, value);
  }
}

const env = () => parentEnvironment();

const getJson = async (url: string, init: RequestInit, what: string) => {
  let response: Response;
  try {
    response = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
  } catch (error) {
    throw new Error(`cannot reach ${what} at ${new URL(url).origin}: ${(error as Error).message}`);
  }
  const body = await response.text();
  if (!response.ok) throw new Error(`${what} answered ${response.status}`);
  return body;
};

/** GCE metadata server: an ID token for the audience (the identity id), as Google's SDKs fetch it. */
const gcpIdToken = async (audience: string) => {
  const e = env();
  const host = e.GCE_METADATA_HOST || e.GCE_METADATA_IP || "metadata.google.internal";
  const url = `http://${host}/computeMetadata/v1/instance/service-accounts/default/identity?audience=${encodeURIComponent(audience)}&format=full`;
  return (await getJson(url, { headers: { "Metadata-Flavor": "Google" } }, "the GCE metadata server")).trim();
};

const base64url = (data: string | Buffer) => Buffer.from(data).toString("base64url");

/** A JWT for the identity signed with the service account's own key (RS256, `kid` its key id). */
const gcpIamToken = (keyFile: string, audience: string) => {
  const key = JSON.parse(keyFile) as { client_email?: string; private_key?: string; private_key_id?: string };
  if (!key.client_email || !key.private_key || !key.private_key_id)
    throw new CliError("the service-account key has no client_email, private_key or private_key_id");
  const now = Math.floor(Date.now() / 1000);
  const header = base64url(JSON.stringify({ alg: "RS256", typ: "JWT", kid: key.private_key_id }));
  const payload = base64url(
    JSON.stringify({ iss: key.client_email, sub: key.client_email, aud: audience, iat: now, exp: now + 900 }),
  );
  const signature = createSign("RSA-SHA256").update(`${header}.${payload}`).sign(key.private_key);
  return `${header}.${payload}.${base64url(signature)}`;
};

/** A managed-identity access token: App Service's IDENTITY_ENDPOINT, else the instance metadata service. */
const azureToken = async (resource: string) => {
  const e = env();
  const clientId = e.AZURE_CLIENT_ID ? `&client_id=${encodeURIComponent(e.AZURE_CLIENT_ID)}` : "";
  const body =
    e.IDENTITY_ENDPOINT && e.IDENTITY_HEADER
      ? await getJson(
          `${e.IDENTITY_ENDPOINT}?api-version=2019-08-01&resource=${encodeURIComponent(resource)}${clientId}`,
          { headers: { "X-IDENTITY-HEADER": e.IDENTITY_HEADER } },
          "the managed identity endpoint",
        )
      : await getJson(
          `${(e.AZURE_POD_IDENTITY_AUTHORITY_HOST || "http://169.254.169.254").replace(/\/+$/, "")}/metadata/identity/oauth2/token?api-version=2018-02-01&resource=${encodeURIComponent(resource)}${clientId}`,
          { headers: { Metadata: "true" } },
          "the Azure instance metadata service",
        );
  const token = (JSON.parse(body) as { access_token?: string }).access_token;
  if (!token) throw new Error("the managed identity endpoint gave no access_token");
  return token;
};

type AwsCredentials = { accessKeyId: string; secretAccessKey: string; sessionToken?: string };

/** The AWS SDKs' order: environment, then the container endpoint (ECS, EKS Pod Identity), then IMDSv2. */
const awsCredentials = async (): Promise<AwsCredentials> => {
  const e = env();
  if (e.AWS_ACCESS_KEY_ID && e.AWS_SECRET_ACCESS_KEY)
    return {
      accessKeyId: e.AWS_ACCESS_KEY_ID,
      secretAccessKey: e.AWS_SECRET_ACCESS_KEY,
      sessionToken: e.AWS_SESSION_TOKEN,
    };
  const fromJson = (body: string) => {
    const c = JSON.parse(body) as { AccessKeyId?: string; SecretAccessKey?: string; Token?: string };
    if (!c.AccessKeyId || !c.SecretAccessKey) throw new Error("the AWS credentials endpoint gave no keys");
    return { accessKeyId: c.AccessKeyId, secretAccessKey: c.SecretAccessKey, sessionToken: c.Token };
  };
  const containerUrl =
    e.AWS_CONTAINER_CREDENTIALS_FULL_URI ||
    (e.AWS_CONTAINER_CREDENTIALS_RELATIVE_URI && `http://169.254.170.2${e.AWS_CONTAINER_CREDENTIALS_RELATIVE_URI}`);
  if (containerUrl) {
    const authorization = e.AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE
      ? readFileSync(e.AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE, "utf8").trim()
      : e.AWS_CONTAINER_AUTHORIZATION_TOKEN;
    return fromJson(
      await getJson(
        containerUrl,
        { headers: authorization ? { Authorization: authorization } : {} },
        "the AWS container credentials endpoint",
      ),
    );
  }
  if (e.AWS_EC2_METADATA_DISABLED === "true") throw new Error("no AWS credentials (environment, container or IMDS)");
  const imds = (e.AWS_EC2_METADATA_SERVICE_ENDPOINT || "http://169.254.169.254").replace(/\/+$/, "");
  const token = await getJson(
    `${imds}/latest/api/token`,
    { method: "PUT", headers: { "X-aws-ec2-metadata-token-ttl-seconds": "21600" } },
    "the EC2 instance metadata service",
  );
  const headers = { "X-aws-ec2-metadata-token": token };
  const base = `${imds}/latest/meta-data/iam/security-credentials/`;
  const role = (await getJson(base, { headers }, "the EC2 instance metadata service")).split("\n")[0]!.trim();
  return fromJson(await getJson(`${base}${role}`, { headers }, "the EC2 instance metadata service"));
};

const sha256 = (data: string) => createHash("sha256").update(data).digest("hex");
const hmac = (key: Buffer | string, data: string) => createHmac("sha256", key).update(data).digest();

/** A SigV4-signed sts:GetCallerIdentity, as the Infisical SDKs send it: body and headers base64. */
export const signedGetCallerIdentity = (credentials: AwsCredentials, region: string, now = new Date()) => {
  const body = "Action=GetCallerIdentity&Version=2011-06-15";
  const host = `sts.${region}.amazonaws.com`;
  const amzDate = now
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d{3}/, "");
  const date = amzDate.slice(0, 8);
  const headers: Record<string, string> = {
    "content-type": "application/x-www-form-urlencoded; charset=utf-8",
    host,
    "x-amz-date": amzDate,
    ...(credentials.sessionToken ? { "x-amz-security-token": credentials.sessionToken } : {}),
  };
  const names = Object.keys(headers).sort();
  const canonicalHeaders = names.map((n) => `${n}:${headers[n]}\n`).join("");
  const signedHeaders = names.join(";");
  const canonicalRequest = ["POST", "/", "", canonicalHeaders, signedHeaders, sha256(body)].join("\n");
  const scope = `${date}/${region}/sts/aws4_request`;
  const stringToSign = ["AWS4-HMAC-SHA256", amzDate, scope, sha256(canonicalRequest)].join("\n");
  const key = [date, region, "sts", "aws4_request"].reduce<Buffer>(
    (k, part) => hmac(k, part),
    Buffer.from(`AWS4${credentials.secretAccessKey}`),
  );
  const signature = hmac(key, stringToSign).toString("hex");
  const sent = {
    Host: host,
    "X-Amz-Date": amzDate,
    "Content-Type": headers["content-type"]!,
    "Content-Length": String(Buffer.byteLength(body)),
    Authorization: `AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`,
    ...(credentials.sessionToken ? { "X-Amz-Security-Token": credentials.sessionToken } : {}),
  };
  return {
    iamHttpRequestMethod: "POST" as const,
    iamRequestBody: Buffer.from(body).toString("base64"),
    iamRequestHeaders: Buffer.from(JSON.stringify(sent)).toString("base64"),
  };
};

/** Log in with the configured method; `token` is not a login (the caller takes it as given). */
export const logIn = async (
  client: KeywardClient,
  auth: Exclude<AuthSpec, { type: "token" }>,
  reader: CredentialReader,
): Promise<Login> => {
  switch (auth.type) {
    case "universal-auth": {
      const clientId = reader.read(auth.clientId, "client-id");
      const clientSecret = reader.read(auth.clientSecret, "client-secret");
      return ok(client.universalAuth.login({ body: { clientId, clientSecret } }));
    }
    case "ldap-auth": {
      const identityId = reader.read(auth.identityId, "identity-id");
      const username = reader.read(auth.username, "username");
      const password = reader.read(auth.password, "password");
      return ok(client.ldapAuth.login({ body: { identityId, username, password } }));
    }
    case "kubernetes": {
      const identityId = reader.read(auth.identityId, "identity-id");
      const jwt = reader.readPath(auth.tokenPath, "service-account-token");
      return ok(client.kubernetesAuth.login({ body: { identityId, jwt } }));
    }
    case "jwt":
    case "oidc": {
      const identityId = reader.read(auth.identityId, "identity-id");
      const jwt = reader.readPath(auth.jwtPath, "jwt-path");
      return auth.type === "jwt"
        ? ok(client.jwtAuth.login({ body: { identityId, jwt } }))
        : ok(client.oidcAuth.login({ body: { identityId, jwt } }));
    }
    case "gcp-id-token": {
      const identityId = reader.read(auth.identityId, "identity-id");
      return ok(client.gcpAuth.login({ body: { identityId, jwt: await gcpIdToken(identityId) } }));
    }
    case "gcp-iam": {
      const identityId = reader.read(auth.identityId, "identity-id");
      const jwt = gcpIamToken(reader.readPath(auth.keyPath, "service-account-key"), identityId);
      return ok(client.gcpAuth.login({ body: { identityId, jwt } }));
    }
    case "azure": {
      const identityId = reader.read(auth.identityId, "identity-id");
      return ok(client.azureAuth.login({ body: { identityId, jwt: await azureToken(auth.resource) } }));
    }
    case "aws-iam": {
      const identityId = reader.read(auth.identityId, "identity-id");
      const e = env();
      const region = e.AWS_REGION || e.AWS_DEFAULT_REGION || "us-east-1";
      const signed = signedGetCallerIdentity(await awsCredentials(), region);
      return ok(client.awsAuth.login({ body: { identityId, ...signed } }));
    }
  }
};
