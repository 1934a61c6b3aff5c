import { createHash, createHmac, timingSafeEqual, webcrypto } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { x509 } from "../../src/modules/pki/x509";

/**
 * The far side of the workload logins, speaking the real protocols over HTTPS with a CA of the
 * test's own: a Kubernetes TokenReview API, a JWKS / x509 key server and an AWS STS that checks
 * SigV4 signatures.
 */
export type TestCa = { caPem: string; keyPem: string; certPem: string };

const pem = (label: string, der: ArrayBuffer) =>
  `-----BEGIN ${label}-----\n${Buffer.from(der)
    .toString("base64")
    .replace(/(.{64})/g, "$1\n")
    .trim()}\n-----END ${label}-----\n`;

/** A CA and a server certificate for 127.0.0.1 and localhost, signed by it. */
export const createTestCa = async (): Promise<TestCa> => {
  const alg = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" };
  const notBefore = new Date(Date.now() - 60_000);
  const notAfter = new Date(Date.now() + 86_400_000);
  const caKeys = await webcrypto.subtle.generateKey(alg, true, ["sign", "verify"]);
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: "01",
    name: "CN=Keyward Test Peer CA",
    notBefore,
    notAfter,
    keys: caKeys,
    signingAlgorithm: alg,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
    ],
  });
  const leafKeys = await webcrypto.subtle.generateKey(alg, true, ["sign", "verify"]);
  const leaf = await x509.X509CertificateGenerator.create({
    serialNumber: "02",
    subject: "CN=localhost",
    issuer: ca.subject,
    notBefore,
    notAfter,
    publicKey: leafKeys.publicKey,
    signingKey: caKeys.privateKey,
    signingAlgorithm: alg,
    extensions: [
      new x509.SubjectAlternativeNameExtension([
        { type: "ip", value: "127.0.0.1" },
        { type: "dns", value: "localhost" },
      ]),
      new x509.ExtendedKeyUsageExtension(["1.3.6.1.5.5.7.3.1"]),
    ],
  });
  return {
    caPem: ca.toString("pem"),
    certPem: leaf.toString("pem"),
    keyPem: pem("PRIVATE KEY", await webcrypto.subtle.exportKey("pkcs8", leafKeys.privateKey)),
  };
};

export type Peer = { url: string; requests: () => number; close: () => Promise<void> };

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });

const send = (res: ServerResponse, status: number, body: unknown, type = "application/json") => {
  res.writeHead(status, { "content-type": type });
  res.end(typeof body === "string" ? body : JSON.stringify(body));
};

/** An HTTPS server on a free loopback port answering with `handle`. */
export const startPeer = async (
  ca: TestCa,
  handle: (req: IncomingMessage, body: string, res: ServerResponse) => void,
): Promise<Peer> => {
  let count = 0;
  const server: Server = createServer({ key: ca.keyPem, cert: ca.certPem }, (req, res) => {
    count += 1;
    void readBody(req).then((body) => handle(req, body, res));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => count,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};

/** Serves a JSON document (a JWKS, an x509 map) that the test may change, at any path. */
export const startKeyServer = async (ca: TestCa, document: () => unknown) =>
  startPeer(ca, (req, _body, res) => (req.method === "GET" ? send(res, 200, document()) : send(res, 405, {})));

/** What the TokenReview API says about one token. */
export type ReviewedToken = { username: string; audiences?: string[] } | { error: string } | "unauthenticated";

/**
 * The Kubernetes TokenReview API: the bearer must be `reviewer` (or, for self-review, a token
 * listed in `delegators`), the body a TokenReview; it answers the review of `tokens[spec.token]`.
 */
export const startTokenReviewApi = async (
  ca: TestCa,
  options: { reviewer: string; delegators?: string[]; tokens: Record<string, ReviewedToken> },
) =>
  startPeer(ca, (req, body, res) => {
    if (req.method !== "POST" || req.url !== "/apis/authentication.k8s.io/v1/tokenreviews")
      return send(res, 404, { kind: "Status", code: 404, message: "the server could not find the requested resource" });
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    if (bearer !== options.reviewer && !(bearer && options.delegators?.includes(bearer)))
      return send(res, 401, {
        kind: "Status",
        apiVersion: "v1",
        status: "Failure",
        message: "Unauthorized",
        code: 401,
      });
    const review = JSON.parse(body) as { kind?: string; spec?: { token?: string; audiences?: string[] } };
    if (review.kind !== "TokenReview" || !review.spec?.token)
      return send(res, 400, { kind: "Status", code: 400, message: "bad TokenReview" });
    const known = options.tokens[review.spec.token];
    const status =
      known === undefined || known === "unauthenticated"
        ? { authenticated: false }
        : "error" in known
          ? { authenticated: false, error: known.error }
          : review.spec.audiences && !review.spec.audiences.some((a) => (known.audiences ?? []).includes(a))
            ? { authenticated: false, error: "[invalid bearer token, token audiences is invalid]" }
            : {
                authenticated: true,
                user: { username: known.username, uid: "uid-1", groups: ["system:serviceaccounts"] },
                audiences: review.spec.audiences ?? known.audiences ?? [],
              };
    send(res, 201, { apiVersion: "authentication.k8s.io/v1", kind: "TokenReview", spec: review.spec, status });
  });

export type StsCaller = { secretAccessKey: string; arn: string; account: string; userId: string };

const sha256 = (data: string) => createHash("sha256").update(data).digest("hex");
const hmac = (key: Buffer | string, data: string) => createHmac("sha256", key).update(data).digest();

/**
 * Whether the request carries a valid SigV4 signature by one of `callers` (keyed by access key id): the
 * caller, with its access key id and the region and service its credential scope names, else undefined.
 */
export const verifySigV4 = (req: IncomingMessage, body: string, callers: Record<string, StsCaller>) => {
  const auth =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]+)$/.exec(
      req.headers.authorization ?? "",
    );
  if (!auth) return undefined;
  const [, keyId = "", date = "", region = "", service = "", signedHeaders = "", signature = ""] = auth;
  const caller = callers[keyId];
  const amzDate = req.headers["x-amz-date"];
  if (!caller || typeof amzDate !== "string") return undefined;
  const canonicalHeaders = signedHeaders
    .split(";")
    .map(
      (name) =>
        `${name}:${String(req.headers[name] ?? "")
          .trim()
          .replace(/\s+/g, " ")}\n`,
    )
    .join("");
  const payloadHash = (req.headers["x-amz-content-sha256"] as string | undefined) ?? sha256(body);
  const [path = "/", query = ""] = (req.url ?? "/").split("?");
  const canonicalRequest = [req.method, path, query, canonicalHeaders, signedHeaders, payloadHash].join("\n");
  const scope = `${date}/${region}/${service}/aws4_request`;
  const stringToSign = ["AWS4-HMAC-SHA256", amzDate, scope, sha256(canonicalRequest)].join("\n");
  const key = [date, region, service, "aws4_request"].reduce<Buffer>(
    (k, part) => hmac(k, part),
    Buffer.from(`AWS4${caller.secretAccessKey}`),
  );
  const expected = hmac(key, stringToSign);
  const given = Buffer.from(signature, "hex");
  return given.length === expected.length && timingSafeEqual(given, expected)
    ? { ...caller, accessKeyId: keyId, region, service }
    : undefined;
};

/** Sign a request as the AWS SDKs do (SigV4), for requests the test builds itself (the Go SDK's shape). */
export const signSigV4 = (
  request: { method: string; host: string; body: string; headers: Record<string, string> },
  credentials: { accessKeyId: string; secretAccessKey: string; region: string },
  now = new Date(),
) => {
  const amzDate = now
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d{3}/, "");
  const date = amzDate.slice(0, 8);
  const headers: Record<string, string> = { ...request.headers, host: request.host, "x-amz-date": amzDate };
  const names = Object.keys(headers)
    .map((n) => n.toLowerCase())
    .sort();
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  const canonicalHeaders = names.map((n) => `${n}:${lower[n]!.trim()}\n`).join("");
  const signedHeaders = names.join(";");
  const canonicalRequest = [request.method, "/", "", canonicalHeaders, signedHeaders, sha256(request.body)].join("\n");
  const scope = `${date}/${credentials.region}/sts/aws4_request`;
  const stringToSign = ["AWS4-HMAC-SHA256", amzDate, scope, sha256(canonicalRequest)].join("\n");
  const key = [date, credentials.region, "sts", "aws4_request"].reduce<Buffer>(
    (k, part) => hmac(k, part),
    Buffer.from(`AWS4${credentials.secretAccessKey}`),
  );
  const signature = hmac(key, stringToSign).toString("hex");
  return {
    ...headers,
    Authorization: `AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`,
  };
};

/** AWS STS answering sts:GetCallerIdentity, JSON when asked for it, XML otherwise (as STS does). */
export const startSts = async (ca: TestCa, callers: Record<string, StsCaller>) => {
  const hosts: string[] = [];
  const peer = await startPeer(ca, (req, body, res) => {
    hosts.push(String(req.headers.host));
    const json = String(req.headers.accept ?? "").includes("application/json");
    const caller = verifySigV4(req, body, callers);
    if (!caller) {
      const message = "The request signature we calculated does not match the signature you provided.";
      return json
        ? send(res, 403, { Error: { Code: "SignatureDoesNotMatch", Message: message, Type: "Sender" } })
        : send(
            res,
            403,
            `<ErrorResponse><Error><Code>SignatureDoesNotMatch</Code><Message>${message}</Message></Error></ErrorResponse>`,
            "text/xml",
          );
    }
    if (new URLSearchParams(body).get("Action") !== "GetCallerIdentity")
      return send(res, 400, { Error: { Message: "bad action" } });
    const result = { Account: caller.account, Arn: caller.arn, UserId: caller.userId };
    return json
      ? send(res, 200, {
          GetCallerIdentityResponse: { GetCallerIdentityResult: result, ResponseMetadata: { RequestId: "r-1" } },
        })
      : send(
          res,
          200,
          `<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><GetCallerIdentityResult><Arn>${result.Arn}</Arn><UserId>${result.UserId}</UserId><Account>${result.Account}</Account></GetCallerIdentityResult></GetCallerIdentityResponse>`,
          "text/xml",
        );
  });
  return { ...peer, hosts };
};

/** An RSA signing key with a self-signed certificate (Google's and Azure's keys come as certificates). */
export const createSigningCertificate = async (name: string) => {
  const alg = {
    name: "RSASSA-PKCS1-v1_5",
    hash: "SHA-256",
    publicExponent: new Uint8Array([1, 0, 1]),
    modulusLength: 2048,
  };
  const keys = await webcrypto.subtle.generateKey(alg, true, ["sign", "verify"]);
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: "03",
    name: `CN=${name}`,
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 86_400_000),
    keys,
    signingAlgorithm: alg,
  });
  return {
    privateKey: keys.privateKey,
    certPem: cert.toString("pem"),
    certDer: Buffer.from(cert.rawData).toString("base64"),
  };
};

/** Serves JSON documents by path (404 elsewhere), as Google's and Azure's key endpoints do. */
export const startPathKeyServer = async (ca: TestCa, documents: () => Record<string, unknown>) =>
  startPeer(ca, (req, _body, res) => {
    const document = documents()[req.url ?? ""];
    return document === undefined ? send(res, 404, { error: "not found" }) : send(res, 200, document);
  });
