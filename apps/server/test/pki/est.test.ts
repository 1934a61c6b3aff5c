import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { getTestApp, startTestApp } from "../helpers/app";
import { createTenant, expectOk } from "../helpers/tenant";
import { estCall, estSuite, makeBootstrapIdentity, makeEstCsr, workDir } from "./est-helpers";
import { createEnrolmentProfile, describeCertificate, ensureOpenssl, verifyChain } from "./pki-helpers";

const PASSPHRASE = "est-passphrase-for-devices";

describe("EST (RFC 7030) with curl and openssl", () => {
  const { estProfile: withConfig, baseUrl } = estSuite();
  const estProfile = (estConfig: Record<string, unknown>) => withConfig(estConfig, { defaults: { ttlDays: 10 } });

  it("serves cacerts and enrolls a PKCS#10 request with the passphrase", async () => {
    const { url, caPem, tenant, profile } = await estProfile({
      passphrase: PASSPHRASE,
      disableBootstrapCaValidation: true,
    });
    const dir = workDir();
    const cacerts = await estCall(dir, `${url}/cacerts`);
    expect(cacerts.status).toBe(200);
    expect(cacerts.headers).toMatch(/content-type: application\/pkcs7-mime/i);
    expect(cacerts.pems.map((p) => p.replace(/\s/g, ""))).toContain(caPem.certificate.replace(/\s/g, ""));

    const { csrFile } = makeEstCsr(dir, "device", "/CN=device-1", "DNS:device-1.example.com");
    const enrolled = await estCall(dir, `${url}/simpleenroll`, { csrFile, user: `device:${PASSPHRASE}` });
    expect(enrolled.status).toBe(200);
    expect(enrolled.pems).toHaveLength(1);
    expect(verifyChain(enrolled.pems[0]!, caPem.certificate).ok).toBe(true);
    expect(describeCertificate(enrolled.pems[0]!)).toContain("DNS:device-1.example.com");
    const listed = expectOk(
      await tenant.admin.certificates.list({ query: { projectId: profile.projectId, profileId: profile.id } }),
    );
    expect(listed.certificates[0]).toMatchObject({ commonName: "device-1", altNames: "device-1.example.com" });
  });

  it("answers 401, 415, 400 and 404 the EST way", async () => {
    const { url } = await estProfile({ passphrase: PASSPHRASE, disableBootstrapCaValidation: true });
    const dir = workDir();
    const { csrFile } = makeEstCsr(dir, "device", "/CN=device-2");
    const noAuth = await estCall(dir, `${url}/simpleenroll`, { csrFile });
    expect(noAuth.status).toBe(401);
    expect(noAuth.headers).toMatch(/www-authenticate: Basic/i);
    expect((await estCall(dir, `${url}/simpleenroll`, { csrFile, user: "device:wrong" })).status).toBe(401);
    const wrongType = await estCall(dir, `${url}/simpleenroll`, {
      csrFile,
      user: `device:${PASSPHRASE}`,
      contentType: "text/plain",
    });
    expect(wrongType.status).toBe(415);
    writeFileSync(join(dir, "garbage.b64"), "bm90IGEgY3Ny\n");
    const garbage = await estCall(dir, `${url}/simpleenroll`, { csrFile: "garbage.b64", user: `device:${PASSPHRASE}` });
    expect(garbage.status).toBe(400);
    expect(garbage.body).toContain("PKCS#10");
    const missing = await estCall(dir, `${baseUrl()}/.well-known/est/00000000-0000-4000-8000-000000000000/cacerts`);
    expect(missing.status).toBe(404);
  });

  it("requires a bootstrap certificate from caChain unless validation is disabled", async () => {
    const dir = workDir();
    const bootstrap = makeBootstrapIdentity(dir);
    const { url, caPem } = await estProfile({ passphrase: PASSPHRASE, caChain: bootstrap.caPem });
    const { csrFile } = makeEstCsr(dir, "device", "/CN=device-3");
    const withoutCert = await estCall(dir, `${url}/simpleenroll`, { csrFile, user: `device:${PASSPHRASE}` });
    expect(withoutCert.status).toBe(401);
    expect(withoutCert.body).toContain("bootstrap");
    const withCert = await estCall(dir, `${url}/simpleenroll`, {
      csrFile,
      user: `device:${PASSPHRASE}`,
      cert: bootstrap.cert,
      key: bootstrap.key,
    });
    expect(withCert.status).toBe(200);
    expect(verifyChain(withCert.pems[0]!, caPem.certificate).ok).toBe(true);
  });

  it("re-enrolls with the client certificate it issued, linking the renewal", async () => {
    const { url, caPem, tenant, profile } = await estProfile({
      passphrase: PASSPHRASE,
      disableBootstrapCaValidation: true,
    });
    const dir = workDir();
    const first = makeEstCsr(dir, "first", "/CN=device-4", "DNS:device-4.example.com");
    const enrolled = await estCall(dir, `${url}/simpleenroll`, { csrFile: first.csrFile, user: `d:${PASSPHRASE}` });
    writeFileSync(join(dir, "current.pem"), enrolled.pems[0]!);

    const second = makeEstCsr(dir, "second", "/CN=device-4", "DNS:device-4.example.com");
    expect(
      (await estCall(dir, `${url}/simplereenroll`, { csrFile: second.csrFile, user: `d:${PASSPHRASE}` })).status,
    ).toBe(401);
    const renamed = makeEstCsr(dir, "renamed", "/CN=someone-else", "DNS:device-4.example.com");
    const mismatch = await estCall(dir, `${url}/simplereenroll`, {
      csrFile: renamed.csrFile,
      cert: "current.pem",
      key: first.keyFile,
    });
    expect(mismatch.status).toBe(400);
    const renewed = await estCall(dir, `${url}/simplereenroll`, {
      csrFile: second.csrFile,
      cert: "current.pem",
      key: first.keyFile,
    });
    expect(renewed.status).toBe(200);
    expect(verifyChain(renewed.pems[0]!, caPem.certificate).ok).toBe(true);
    // Without TRUST_PROXY a forwarded client certificate header is ignored.
    const plainUrl = `${(await getTestApp()).baseUrl}/.well-known/est/${profile.id}/simplereenroll`;
    const forwarded = await estCall(dir, plainUrl, {
      csrFile: second.csrFile,
      headers: [`X-SSL-Client-Cert: ${encodeURIComponent(renewed.pems[0]!)}`],
    });
    expect(forwarded.status).toBe(401);

    const { certificates } = expectOk(
      await tenant.admin.certificates.list({ query: { projectId: profile.projectId, profileId: profile.id } }),
    );
    const [newer, older] = certificates;
    expect(newer).toMatchObject({ renewedFromCertificateId: older!.id });
    expect(older).toMatchObject({ renewedByCertificateId: newer!.id, renewalStatus: "renewed" });

    // The client certificate of this profile also authenticates a plain enrollment, without the passphrase.
    const third = makeEstCsr(dir, "third", "/CN=device-4b");
    const byCert = await estCall(dir, `${url}/simpleenroll`, {
      csrFile: third.csrFile,
      cert: "current.pem",
      key: first.keyFile,
    });
    expect(byCert.status).toBe(200);
  });
});

describe("EST behind a TLS-terminating proxy", () => {
  it("takes the client certificate from X-SSL-Client-Cert only from a trusted proxy", async () => {
    ensureOpenssl();
    const app = await startTestApp({ TRUST_PROXY: "127.0.0.1" });
    try {
      const tenant = await createTenant(app);
      const { ca, profile } = await createEnrolmentProfile(tenant, "est", {
        estConfig: { passphrase: PASSPHRASE, disableBootstrapCaValidation: true },
      });
      const dir = workDir();
      const first = makeEstCsr(dir, "first", "/CN=proxied-device");
      const proxied = `${app.baseUrl}/.well-known/est/${profile.id}`;
      const enrolled = await estCall(dir, `${proxied}/simpleenroll`, {
        csrFile: first.csrFile,
        user: `d:${PASSPHRASE}`,
      });
      expect(enrolled.status).toBe(200);
      const header = `X-SSL-Client-Cert: ${encodeURIComponent(enrolled.pems[0]!)}`;
      const second = makeEstCsr(dir, "second", "/CN=proxied-device");
      const renewed = await estCall(dir, `${proxied}/simplereenroll`, { csrFile: second.csrFile, headers: [header] });
      expect(renewed.status).toBe(200);
      const caPem = expectOk(await tenant.admin.certificateAuthorities.getCertificate({ params: { caId: ca.id } }));
      expect(verifyChain(renewed.pems[0]!, caPem.certificate).ok).toBe(true);
    } finally {
      await app.close();
    }
  }, 120_000);
});
