import { createHash, randomBytes } from "node:crypto";
import {
  BasicOCSPResponse,
  CertID,
  OCSPRequest,
  OCSPResponse,
  OCSPResponseStatus,
  Request as OcspEntry,
  TBSRequest,
  id_pkix_ocsp_nonce,
} from "@peculiar/asn1-ocsp";
import { AsnConvert, OctetString } from "@peculiar/asn1-schema";
import { AlgorithmIdentifier, Certificate, Extension } from "@peculiar/asn1-x509";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { x509 } from "../../src/modules/pki/x509";
import { startTestApp, type TestApp } from "../helpers/app";
import { createTenant, expectOk, type Tenant } from "../helpers/tenant";
import { createApiProfile, createCertProject, createRootCa, expectIssued } from "./pki-helpers";

const ocspPath = (caId: string) => `/api/v1/cert-manager/ca/internal/${caId}/ocsp`;
const certificateOf = (pem: string) => AsnConvert.parse(x509.PemConverter.decode(pem)[0]!, Certificate);
const sha1 = (bytes: ArrayBuffer) => new OctetString(createHash("sha1").update(Buffer.from(bytes)).digest());

/** A DER OCSPRequest for `leafPem` issued by `issuerPem` (SHA-1 CertID), with a nonce when given. */
const ocspRequest = (issuerPem: string, leafPem: string, nonce?: Buffer) => {
  const issuer = certificateOf(issuerPem).tbsCertificate;
  const certId = new CertID({
    hashAlgorithm: new AlgorithmIdentifier({ algorithm: "1.3.14.3.2.26", parameters: null }),
    issuerNameHash: sha1(AsnConvert.serialize(issuer.subject)),
    issuerKeyHash: sha1(issuer.subjectPublicKeyInfo.subjectPublicKey),
    serialNumber: certificateOf(leafPem).tbsCertificate.serialNumber,
  });
  const extensions = nonce
    ? [
        new Extension({
          extnID: id_pkix_ocsp_nonce,
          extnValue: new OctetString(AsnConvert.serialize(new OctetString(nonce))),
        }),
      ]
    : undefined;
  const request = new OCSPRequest({
    tbsRequest: new TBSRequest({ requestList: [new OcspEntry({ reqCert: certId })], requestExtensions: extensions }),
  });
  return Buffer.from(AsnConvert.serialize(request));
};

/** What a signed answer says: produced when, the certificate's status, and whether it carries extensions. */
const readAnswer = (der: Buffer) => {
  const response = AsnConvert.parse(der, OCSPResponse);
  expect(response.responseStatus).toBe(OCSPResponseStatus.successful);
  const basic = AsnConvert.parse(response.responseBytes!.response.buffer, BasicOCSPResponse);
  const data = basic.tbsResponseData;
  const status = data.responses[0]!.certStatus;
  return {
    producedAt: data.producedAt.getTime(),
    status: status.good !== undefined ? "good" : status.revoked ? "revoked" : "unknown",
    extensions: data.responseExtensions?.length ?? 0,
  };
};

describe("OCSP answers: the signing is kept a minute, the statuses are read every time", () => {
  let tenant: Tenant;
  let caPem: string;
  let caId: string;
  const leaves: { id: string; pem: string }[] = [];

  const post = async (body: Buffer) => {
    const res = await fetch(`${tenant.app.baseUrl}${ocspPath(caId)}`, {
      method: "POST",
      headers: { "content-type": "application/ocsp-request" },
      body,
    });
    expect(res.status).toBe(200);
    return Buffer.from(await res.arrayBuffer());
  };

  /** Runs `body` with the app's clock moved `ms` ahead (the answer cache and the signed times read it). */
  const later = async <T>(ms: number, body: () => Promise<T>) => {
    const clock = tenant.app.deps.clock;
    const realNow = clock.now;
    clock.now = () => realNow() + ms;
    try {
      return await body();
    } finally {
      clock.now = realNow;
    }
  };

  beforeAll(async () => {
    tenant = await createTenant();
    const project = await createCertProject(tenant);
    // An ECDSA key: two signatures of the same data differ, so equal answers were signed once.
    const ca = await createRootCa(tenant, project.id, { keyAlgorithm: "EC_prime256v1" });
    caId = ca.id;
    caPem = expectOk(await tenant.admin.certificateAuthorities.getCertificate({ params: { caId } })).certificate;
    const profile = await createApiProfile(tenant, project.id, caId);
    for (const name of ["a", "b"]) {
      const issued = expectIssued(
        await tenant.admin.certificates.issue({
          body: { profileId: profile.id, commonName: `${name}.example.com`, ttl: "1d", keyAlgorithm: "EC_prime256v1" },
        }),
      );
      leaves.push({ id: issued.certificateId, pem: issued.certificate });
    }
  });

  it("answers the same question within the window with the same signed bytes, then signs afresh", async () => {
    const request = ocspRequest(caPem, leaves[0]!.pem);
    const first = await post(request);
    // Thirty seconds on, a new signature would say so in producedAt (and differ in its ECDSA signature).
    const second = await later(30_000, () => post(request));
    expect(second.equals(first)).toBe(true);
    expect(readAnswer(first).status).toBe("good");
    // Past the window the answer is signed again, produced at the later time.
    const fresh = await later(61_000, () => post(request));
    expect(fresh.equals(first)).toBe(false);
    expect(readAnswer(fresh).producedAt - readAnswer(first).producedAt).toBeGreaterThanOrEqual(60_000);
    expect(readAnswer(fresh).status).toBe("good");
  });

  it("answers a request with a nonce from the same signed bytes, the nonce not echoed", async () => {
    const plain = await post(ocspRequest(caPem, leaves[1]!.pem));
    const withNonce = await post(ocspRequest(caPem, leaves[1]!.pem, randomBytes(16)));
    const otherNonce = await post(ocspRequest(caPem, leaves[1]!.pem, randomBytes(32)));
    expect(withNonce.equals(plain)).toBe(true);
    expect(otherNonce.equals(plain)).toBe(true);
    expect(readAnswer(withNonce).extensions).toBe(0);
    // A nonce outside 1 to 32 octets is still a malformed request.
    const tooLong = AsnConvert.parse(await post(ocspRequest(caPem, leaves[1]!.pem, randomBytes(33))), OCSPResponse);
    expect(tooLong.responseStatus).toBe(OCSPResponseStatus.malformedRequest);
  });

  it("shows a revocation in the very next answer, within the window of the cached good answer", async () => {
    const request = ocspRequest(caPem, leaves[1]!.pem);
    const good = await post(request);
    expect(readAnswer(good).status).toBe("good");
    expect((await post(request)).equals(good)).toBe(true);
    expectOk(
      await tenant.admin.certificates.revoke({
        params: { certificateId: leaves[1]!.id },
        body: { revocationReason: "KEY_COMPROMISE" },
      }),
    );
    const revoked = await post(request);
    expect(readAnswer(revoked).status).toBe("revoked");
    // The revoked answer is kept in its turn.
    expect((await later(10_000, () => post(request))).equals(revoked)).toBe(true);
    // The other certificate's cached answer is untouched.
    expect(readAnswer(await post(ocspRequest(caPem, leaves[0]!.pem))).status).toBe("good");
  });

  it("reports the cached answers on the cache-size gauge", async () => {
    const gauge = await tenant.app.deps.metrics.cacheEntries.get();
    const entry = gauge.values.find((v) => v.labels.cache === "ocsp_answers");
    expect(entry?.value).toBe(tenant.app.deps.ocspAnswers.size());
    expect(entry?.value).toBeGreaterThan(0);
  });
});

describe("OCSP rate limit per client IP", () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({
      TRUST_PROXY: "127.0.0.1/8",
      // One window for the whole test: it never straddles a window boundary.
      RATE_LIMIT_WINDOW_MS: "3600000",
      RATE_LIMIT_OCSP: "3",
    });
  }, 120_000);

  afterAll(() => app?.close());

  const ask = (method: "GET" | "POST", ip: string, caId = "00000000-0000-4000-8000-000000000000") =>
    fetch(`${app.baseUrl}${ocspPath(caId)}${method === "GET" ? "/MAA=" : ""}`, {
      method,
      headers: { "x-forwarded-for": ip, ...(method === "POST" ? { "content-type": "application/ocsp-request" } : {}) },
      ...(method === "POST" ? { body: new Uint8Array([0x30, 0x00]) } : {}),
    });

  it("answers 429 with Retry-After and the JSON error body past the limit, GET and POST counted together", async () => {
    const ip = "203.0.113.40";
    const statuses: number[] = [];
    for (const method of ["POST", "GET", "POST"] as const) statuses.push((await ask(method, ip)).status);
    expect(statuses).toEqual([200, 200, 200]);
    for (const method of ["POST", "GET"] as const) {
      const res = await ask(method, ip);
      expect(res.status).toBe(429);
      expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(await res.json()).toMatchObject({ statusCode: 429, error: "TooManyRequests" });
    }
    // Another client is not held back, and the CA routes beside the responder are not counted.
    expect((await ask("POST", "203.0.113.41")).status).toBe(200);
    const crl = await fetch(`${app.baseUrl}/api/v1/cert-manager/ca/internal/00000000-0000-4000-8000-000000000000`, {
      headers: { "x-forwarded-for": ip },
    });
    expect(crl.status).not.toBe(429);
  });
});
