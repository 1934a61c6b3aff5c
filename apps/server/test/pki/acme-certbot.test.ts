import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app";
import { createTenant, expectOk, type Tenant } from "../helpers/tenant";
import { freePort } from "../services/debian";
import { certbot, ensureCertbot, readLive } from "./acme-helpers";
import { createEnrolmentProfile, ensureOpenssl, verifyChain } from "./pki-helpers";

/**
 * certbot from Debian against a real app: standalone http-01 on a loopback port that the app is
 * told to use through ACME_HTTP01_PORT (the documented setting for tests and relayed validation).
 */
describe("ACME with certbot", () => {
  let app: TestApp;
  let tenant: Tenant;
  let httpPort: number;

  beforeAll(async () => {
    ensureCertbot();
    ensureOpenssl();
    httpPort = await freePort();
    app = await startTestApp({ ACME_HTTP01_PORT: String(httpPort) });
    tenant = await createTenant(app);
  }, 180_000);

  afterAll(async () => {
    await app?.close();
  });

  const acmeProfile = async (acmeConfig: Record<string, unknown> = {}) => {
    const { project, ca, profile } = await createEnrolmentProfile(tenant, "acme", {
      defaults: { ttlDays: 30 },
      acmeConfig,
    });
    const caPem = expectOk(await tenant.admin.certificateAuthorities.getCertificate({ params: { caId: ca.id } }));
    return { project, ca, caPem, profile, directoryUrl: `${app.baseUrl}${profile.acmeConfig!.directoryUrl}` };
  };

  const standalone = (directoryUrl: string, extra: string[]) =>
    certbot([
      "certonly",
      "--standalone",
      "--agree-tos",
      "--register-unsafely-without-email",
      "--server",
      directoryUrl,
      "--http-01-port",
      String(httpPort),
      "--http-01-address",
      "127.0.0.1",
      "--preferred-challenges",
      "http",
      "-d",
      "localhost",
      ...extra,
    ]);

  it("issues a certificate to certbot with external account binding, and revokes it", async () => {
    const { profile, directoryUrl, caPem, ca } = await acmeProfile();
    const eab = expectOk(
      await tenant.admin.certificateProfiles.revealAcmeEabSecret({ params: { profileId: profile.id } }),
    );
    const run = await standalone(directoryUrl, ["--eab-kid", eab.eabKid, "--eab-hmac-key", eab.eabSecret]);
    expect(run.output).toContain("Successfully received certificate");
    expect(run.code).toBe(0);

    const leaf = readLive(run, "localhost", "cert.pem");
    expect(verifyChain(leaf, caPem.certificate).ok).toBe(true);
    const listed = expectOk(
      await tenant.admin.certificates.list({ query: { projectId: profile.projectId, profileId: profile.id } }),
    );
    expect(listed.certificates).toHaveLength(1);
    expect(listed.certificates[0]).toMatchObject({ commonName: "localhost", altNames: "localhost", status: "active" });

    const revoke = await certbot(
      [
        "revoke",
        "--server",
        directoryUrl,
        "--cert-path",
        `${run.dir}/config/live/localhost/cert.pem`,
        "--reason",
        "keycompromise",
        "--no-delete-after-revoke",
      ],
      run.dir,
    );
    expect(revoke.output).toContain("Congratulations! You have successfully revoked the certificate");
    const after = expectOk(
      await tenant.admin.certificates.get({ params: { certificateId: listed.certificates[0]!.id } }),
    );
    expect(after.certificate).toMatchObject({ status: "revoked", revocationReason: "KEY_COMPROMISE" });
    const { crl } = expectOk(await tenant.admin.certificateAuthorities.getCrl({ params: { caId: ca.id } }));
    expect(verifyChain(leaf, caPem.certificate, "", ["-crl_check"], crl).output).toContain("certificate revoked");
  }, 180_000);

  it("refuses certbot without external account binding unless the profile skips it", async () => {
    const bound = await acmeProfile();
    const refused = await standalone(bound.directoryUrl, []);
    expect(refused.code).not.toBe(0);
    expect(refused.output).toMatch(/external account/i);

    const open = await acmeProfile({ skipEabBinding: true });
    const run = await standalone(open.directoryUrl, []);
    expect(run.output).toContain("Successfully received certificate");
  }, 180_000);
});
