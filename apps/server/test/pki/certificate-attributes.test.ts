import { beforeAll, describe, expect, it } from "vitest";
import { createIdentity, expectOk, type Tenant } from "../helpers/tenant";
import { describeCertificate, issuingHierarchy, ensureOpenssl, makeCsr, verifyChain } from "./pki-helpers";

beforeAll(() => ensureOpenssl());

type Envelope = {
  certificate: {
    certificate: string;
    issuingCaCertificate: string;
    certificateChain: string;
    privateKey?: string;
    serialNumber: string;
    certificateId: string;
  };
  certificateRequestId: string;
};

/** The request exactly as the Infisical agent (Go, resty) sends it: JSON, empty attribute keys omitted. */
const issueAsAgent = (tenant: Tenant, body: Record<string, unknown>, token = tenant.adminToken) =>
  fetch(`${tenant.app.baseUrl}/api/v1/cert-manager/certificates`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "user-agent": "infisical-cli" },
    body: JSON.stringify(body),
  });

const issue = (tenant: Tenant, body: Record<string, unknown>) =>
  tenant.admin.certificates.issue({ body: body as never });

describe("POST /api/v1/cert-manager/certificates with attributes", () => {
  it("issues the certificate the agent asks for and answers in the envelope it reads", async () => {
    const { tenant, profile, rootPem } = await issuingHierarchy();
    const res = await issueAsAgent(tenant, {
      profileId: profile.id,
      attributes: {
        commonName: "agent.example.com",
        altNames: [
          { type: "dns_name", value: "agent.example.com" },
          { type: "dns_name", value: "alt.example.com" },
          { type: "ip_address", value: "10.0.0.9" },
        ],
        ttl: "7d",
        keyAlgorithm: "EC_prime256v1",
        signatureAlgorithm: "ECDSA-SHA384",
        keyUsages: ["digital_signature"],
        extendedKeyUsages: ["server_auth", "client_auth"],
      },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Envelope;
    expect(body).toEqual({
      certificate: {
        certificate: expect.stringContaining("BEGIN CERTIFICATE"),
        issuingCaCertificate: expect.stringContaining("BEGIN CERTIFICATE"),
        certificateChain: expect.stringContaining("BEGIN CERTIFICATE"),
        privateKey: expect.stringContaining("BEGIN PRIVATE KEY"),
        serialNumber: expect.any(String),
        certificateId: expect.any(String),
      },
      certificateRequestId: body.certificate.certificateId,
      certificateId: body.certificate.certificateId,
      serialNumber: body.certificate.serialNumber,
    });
    const { certificate: issued } = body;
    expect(verifyChain(issued.certificate, rootPem, issued.certificateChain).output).toContain(": OK");
    const text = describeCertificate(issued.certificate);
    expect(text).toContain("CN = agent.example.com");
    expect(text).toMatch(/DNS:agent\.example\.com, DNS:alt\.example\.com, IP Address:10\.0\.0\.9/);
    expect(text).toContain("ecdsa-with-SHA384");
    expect(text).toContain("TLS Web Server Authentication, TLS Web Client Authentication");

    const record = expectOk(
      await tenant.admin.certificates.get({ params: { certificateId: issued.certificateId } }),
    ).certificate;
    expect(record).toMatchObject({
      commonName: "agent.example.com",
      altNames: "agent.example.com,alt.example.com,10.0.0.9",
      keyAlgorithm: "EC_prime256v1",
      signatureAlgorithm: "ECDSA-SHA384",
      keyUsages: ["digital_signature"],
      extendedKeyUsages: ["server_auth", "client_auth"],
    });
    const days = (new Date(record.notAfter).getTime() - new Date(record.notBefore).getTime()) / 86_400_000;
    expect(Math.round(days)).toBe(7);
  });

  it("signs the agent's CSR, takes an explicit validity window and drops roots from the chain on request", async () => {
    const { tenant, profile, rootPem } = await issuingHierarchy();
    const { csr } = makeCsr("/CN=csr.example.com");
    const notBefore = new Date(Date.now() + 60_000);
    const notAfter = new Date(notBefore.getTime() + 3 * 86_400_000);
    const res = await issueAsAgent(tenant, {
      profileId: profile.id,
      csr,
      attributes: {
        altNames: [{ type: "dns_name", value: "csr.example.com" }],
        notBefore: notBefore.toISOString(),
        notAfter: notAfter.toISOString(),
        removeRootsFromChain: true,
      },
    });
    expect(res.status).toBe(200);
    const { certificate: issued } = (await res.json()) as Envelope;
    expect(issued.privateKey).toBeUndefined();
    expect(issued.certificateChain).not.toContain(rootPem.trim());
    expect(describeCertificate(issued.certificate)).toContain("CN = csr.example.com");
    const record = expectOk(
      await tenant.admin.certificates.get({ params: { certificateId: issued.certificateId } }),
    ).certificate;
    expect(Math.abs(new Date(record.notBefore).getTime() - notBefore.getTime())).toBeLessThan(1_000);
    expect(Math.abs(new Date(record.notAfter).getTime() - notAfter.getTime())).toBeLessThan(1_000);
  });

  it("refuses policy violations through attributes as through the top-level fields", async () => {
    const { tenant, profile } = await issuingHierarchy({
      defaults: { ttlDays: 10, keyUsages: ["digital_signature"], extendedKeyUsages: ["server_auth"] },
    });
    const message = "The requested TTL exceeds the profile's maximum of 10 days";
    const topLevel = await issue(tenant, { profileId: profile.id, commonName: "a.example.com", ttl: "11d" });
    expect(topLevel.status).toBe(400);
    expect(topLevel.body).toMatchObject({ message });
    const viaAttributes = await issue(tenant, {
      profileId: profile.id,
      attributes: { commonName: "a.example.com", ttl: "11d" },
    });
    expect(viaAttributes.status).toBe(400);
    expect(viaAttributes.body).toMatchObject({ message });
    const viaWindow = await issue(tenant, {
      profileId: profile.id,
      attributes: { commonName: "a.example.com", notAfter: new Date(Date.now() + 11 * 86_400_000).toISOString() },
    });
    expect(viaWindow.status).toBe(400);
    expect(viaWindow.body).toMatchObject({ message });

    const name = { commonName: "a.example.com" };
    const refusals: [Record<string, unknown>, string][] = [
      [
        { ...name, keyUsages: ["key_encipherment"] },
        "Key usage key_encipherment is not allowed by the certificate profile",
      ],
      [{ ...name, keyUsages: ["key_cert_sign"] }, "Key usage key_cert_sign is not allowed by the certificate profile"],
      [
        { ...name, extendedKeyUsages: ["code_signing"] },
        "Extended key usage code_signing is not allowed by the certificate profile",
      ],
      [{ ...name, signatureAlgorithm: "RSA-SHA256" }, "Signature algorithm RSA-SHA256 cannot be made with a EC"],
      [{ ...name, notBefore: new Date(Date.now() - 86_400_000).toISOString() }, "notBefore cannot be in the past"],
      [{}, "A common name is required: give commonName, or set it in the CSR or the profile defaults"],
    ];
    for (const [attributes, expected] of refusals) {
      const res = await issue(tenant, { profileId: profile.id, attributes });
      expect(res.status, JSON.stringify(attributes)).toBe(400);
      expect(res.body).toMatchObject({ message: expect.stringContaining(expected) });
    }
  });

  it("validates attributes with 422, and refuses a body that mixes both forms", async () => {
    const { tenant, profile } = await issuingHierarchy();
    const invalid = [
      { attributes: { commonName: "a", altNames: [{ type: "dns_name", value: "not a host!" }] } },
      { attributes: { commonName: "a", altNames: [{ type: "fax", value: "a.example.com" }] } },
      { attributes: { commonName: "a", altNames: "a.example.com" } },
      { attributes: { commonName: "a", ttl: "soon" } },
      { attributes: { commonName: "a", keyUsages: ["everything"] } },
      { attributes: { commonName: "a", signatureAlgorithm: "MD5" } },
      { attributes: { commonName: "a", notAfter: "tomorrow" } },
      { attributes: { commonName: "a", ttl: "1d", notAfter: new Date(Date.now() + 86_400_000).toISOString() } },
      { attributes: { commonName: "a", notBefore: "2030-01-02T00:00:00Z", notAfter: "2030-01-01T00:00:00Z" } },
      { csr: "x", attributes: { keyAlgorithm: "RSA_2048" } },
      { commonName: "top.example.com", attributes: { commonName: "attr.example.com" } },
      { altNames: "top.example.com", attributes: { commonName: "a" } },
      { ttl: "1d", attributes: { commonName: "a" } },
    ];
    for (const body of invalid) {
      const res = await issue(tenant, { profileId: profile.id, ...body });
      expect(res.status, JSON.stringify(body)).toBe(422);
    }
    const mixed = await issue(tenant, {
      profileId: profile.id,
      commonName: "top.example.com",
      attributes: { commonName: "attr.example.com" },
    });
    expect(JSON.stringify(mixed.body)).toContain("Give commonName either at the top level or in attributes, not both");
  });

  it("answers 401 and 403 without issue-cert on the profile, as the top-level form does", async () => {
    const { tenant, project, profile } = await issuingHierarchy();
    const body = { profileId: profile.id, attributes: { commonName: "a.example.com" } };
    expect((await tenant.anonymous.certificates.issue({ body })).status).toBe(401);
    for (const projectRole of ["no-access", "viewer"]) {
      const identity = await createIdentity(tenant, { projectId: project.id, projectRole });
      const res = await issueAsAgent(tenant, body, identity.token);
      expect(res.status).toBe(403);
      expect(await res.json()).toMatchObject({
        error: "PermissionDenied",
        message: "You are not allowed to issue-cert on certificate-profiles",
      });
    }
    const member = await createIdentity(tenant, { projectId: project.id, projectRole: "member" });
    expect((await issueAsAgent(tenant, body, member.token)).status).toBe(200);
  });
});
