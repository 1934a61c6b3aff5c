import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { getTestApp, type TestApp } from "../helpers/app";
import { createIdentity, createTenant, expectOk, type Tenant } from "../helpers/tenant";
import { createEnrolmentProfile } from "./pki-helpers";
import { SCEP_SUBMIT, ensureCertmonger, requestState, run, withCertmonger } from "./scep-helpers";

const STATIC = "static-secret-for-devices";

/** getcert lines for one request against CA "kw"; `-w` waits for issue or refusal. */
const request = (home: string, id: string, subject: string, challenge: string, extra = "") =>
  `getcert request -s -c kw -I ${id} -f ${home}/out/${id}.pem -k ${home}/out/${id}.key -N CN=${subject} -L '${challenge}' ${extra} -w >/dev/null 2>&1`;

const statusOf = (listing: string, id: string) => {
  const block = listing.split("Request ID ").find((b) => b.startsWith(`'${id}'`)) ?? "";
  return { status: /status: (\S+)/.exec(block)?.[1], error: /ca-error: (.*)/.exec(block)?.[1] ?? "" };
};

describe("SCEP (RFC 8894) with certmonger", () => {
  let app: TestApp;
  let tenant: Tenant;
  const scepProfile = async (scepConfig: Record<string, unknown>, defaults?: Record<string, unknown>) => {
    const made = await createEnrolmentProfile(tenant, "scep" as never, {
      scepConfig,
      ...(defaults ? { defaults } : {}),
    });
    const path = new URL(made.profile.scepConfig!.scepEndpointUrl, "http://localhost").pathname;
    return { ...made, url: `${app.baseUrl}${path}` };
  };
  const audit = async (projectId: string, eventType: string) =>
    expectOk(await tenant.admin.auditLogs.list({ query: { projectId, eventType, limit: 20 } })).auditLogs;
  const metrics = async (profileId: string) =>
    expectOk(await tenant.admin.certificateProfiles.get({ params: { profileId } })).certificateProfile.metrics!;

  beforeAll(async () => {
    ensureCertmonger();
    app = await getTestApp();
    tenant = await createTenant();
  });

  it("enrols with a static challenge, renews with its certificate, refuses a wrong challenge, a CSR outside policy and a tampered message", async () => {
    const { profile, ca, url, project } = await scepProfile(
      { challengeType: "static", challengePassword: STATIC, allowCertBasedRenewal: true },
      { ttlDays: 30, keyAlgorithm: "RSA_2048" },
    );
    expect(profile.scepConfig).toMatchObject({ challengeType: "static", challengeEndpointUrl: null });
    expect(profile.scepConfig!.raCertificatePem).toContain("BEGIN CERTIFICATE");
    expect(profile.scepConfig!.raCertExpiresAt).not.toBeNull();
    const run1 = await withCertmonger(
      (home) => `
getcert add-scep-ca -s -c kw -u '${url}' >/dev/null
${request(home, "good", "device-1", STATIC, "-D device-1.example.com")}
${request(home, "wrong", "device-2", "not-the-secret")}
${request(home, "policy", "device-3", STATIC, "-g 3072")}
getcert rekey -s -i good -w >/dev/null 2>&1
getcert list -s`,
    );
    const good = statusOf(run1.stdout, "good");
    expect(good.status).toBe("MONITORING");
    expect(statusOf(run1.stdout, "wrong")).toMatchObject({ status: "CA_REJECTED" });
    expect(statusOf(run1.stdout, "policy")).toMatchObject({ status: "CA_REJECTED" });
    // certmonger's words for failInfo badRequest (2).
    expect(statusOf(run1.stdout, "wrong").error).toContain("Transaction either is not permitted");
    expect(statusOf(run1.stdout, "policy").error).toContain("Transaction either is not permitted");
    const state = requestState(run1.home);
    expect(state.good!.cert).toContain("BEGIN CERTIFICATE");

    const enrolled = await audit(project.id, "scep-enrollment");
    expect(enrolled.length).toBeGreaterThanOrEqual(1);
    expect(enrolled[0]!.actor).toMatchObject({ type: "scepAccount", metadata: { profileId: profile.id } });
    const renewed = await audit(project.id, "scep-renewal");
    expect(renewed).toHaveLength(1);
    expect(enrolled).toHaveLength(1);
    expect(renewed[0]!.event.metadata).toMatchObject({
      renewedFromSerialNumber: enrolled[0]!.event.metadata.serialNumber,
    });
    expect(await metrics(profile.id)).toMatchObject({ totalCertificates: 2 });

    // A tampered PKCSReq (a byte of the enveloped CSR changed) is a FAILURE badMessageCheck, signed.
    const pkcsReq = Buffer.from(
      state.good!.scep_req!.replace(/-----[A-Z0-9 ]+-----/g, "").replace(/\s+/g, ""),
      "base64",
    );
    pkcsReq.writeUInt8(pkcsReq.readUInt8(pkcsReq.length - 400) ^ 0x01, pkcsReq.length - 400);
    const caPem = expectOk(await tenant.admin.certificateAuthorities.getCertificate({ params: { caId: ca.id } }));
    writeFileSync(
      join(run1.home, "tampered.pem"),
      `-----BEGIN PKCS7-----\n${pkcsReq.toString("base64")}\n-----END PKCS7-----\n`,
    );
    writeFileSync(join(run1.home, "ra.pem"), profile.scepConfig!.raCertificatePem!);
    writeFileSync(join(run1.home, "ca.pem"), caPem.certificate);
    const tampered = await run(SCEP_SUBMIT, ["-u", url, "-r", "ra.pem", "-N", "ca.pem", "-p", "tampered.pem"], {
      cwd: run1.home,
    });
    expect(tampered.code).toBe(2);
    expect(tampered.stdout + tampered.stderr).toMatch(/Integrity check of client request failed/);
  }, 120_000);

  it("enrols with one-time dynamic challenges and refuses reused and expired ones", async () => {
    const { profile, url, project } = await scepProfile({ challengeType: "dynamic", dynamicChallengeMaxPending: 3 });
    expect(profile.scepConfig!.challengeEndpointUrl).toContain(`/certificate-profiles/${profile.id}/scep/challenges`);
    const params = { profileId: profile.id };
    const first = expectOk(await tenant.admin.certificateProfiles.issueScepChallenge({ params }));
    const second = expectOk(await tenant.admin.certificateProfiles.issueScepChallenge({ params }));
    await app.deps.db
      .updateTable("pki_scep_challenges")
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where("profile_id", "=", profile.id)
      .where("expires_at", "=", new Date(second.expiresAt))
      .execute();
    const run2 = await withCertmonger(
      (home) => `
getcert add-scep-ca -s -c kw -u '${url}' >/dev/null
${request(home, "one", "dyn-1", first.challenge)}
${request(home, "again", "dyn-2", first.challenge)}
${request(home, "expired", "dyn-3", second.challenge)}
getcert list -s`,
    );
    expect(statusOf(run2.stdout, "one").status).toBe("MONITORING");
    expect(statusOf(run2.stdout, "again").status).toBe("CA_REJECTED");
    expect(statusOf(run2.stdout, "expired").status).toBe("CA_REJECTED");
    expect(await audit(project.id, "scep-enrollment")).toHaveLength(1);
    expect((await metrics(profile.id)).totalCertificates).toBe(1);
  }, 120_000);

  it("answers GetCACaps and GetCACert, and 404 for a profile that does not use SCEP", async () => {
    const { url } = await scepProfile({
      challengeType: "static",
      challengePassword: STATIC,
      allowCertBasedRenewal: false,
    });
    const caps = await fetch(`${url}?operation=GetCACaps`);
    const text = await caps.text();
    expect(text).toContain("POSTPKIOperation");
    expect(text).toContain("SHA-256");
    expect(text).toContain("AES");
    expect(text).not.toContain("Renewal");
    const certs = await fetch(`${url}?operation=GetCACert`);
    expect(certs.headers.get("content-type")).toContain("application/x-x509-ca-ra-cert");
    const { profile: est } = await createEnrolmentProfile(tenant, "est", {
      estConfig: { passphrase: "x".repeat(12), disableBootstrapCaValidation: true },
    });
    const other = await fetch(
      `${app.baseUrl}/api/v1/cert-manager/scep/profiles/${est.id}/pkiclient.exe?operation=GetCACaps`,
    );
    expect(other.status).toBe(404);
    const garbage = await fetch(`${url}?operation=PKIOperation`, { method: "POST", body: "not cms" });
    expect(garbage.status).toBe(400);
  });

  it("creates and updates SCEP profiles and issues dynamic challenges through the typed client", async () => {
    const { project, ca } = await createEnrolmentProfile(tenant, "api");
    const create = (body: Record<string, unknown>) =>
      tenant.admin.certificateProfiles.create({
        body: {
          projectId: project.id,
          caId: ca.id,
          slug: `scep-${Math.random().toString(36).slice(2, 8)}`,
          enrollmentType: "scep",
          issuerType: "ca",
          ...body,
        } as never,
      });
    expect((await create({})).status).toBe(422);
    expect((await create({ scepConfig: { challengeType: "static" } })).status).toBe(422);
    const selfSigned = await tenant.admin.certificateProfiles.create({
      body: {
        projectId: project.id,
        slug: "scep-self",
        enrollmentType: "scep",
        issuerType: "self-signed",
        scepConfig: { challengeType: "dynamic" },
      } as never,
    });
    expect(selfSigned.status).toBe(400);
    const made = expectOk(
      await create({ scepConfig: { challengeType: "static", challengePassword: STATIC } }),
    ).certificateProfile;
    expect(JSON.stringify(made)).not.toContain(STATIC);
    const params = { profileId: made.id };
    const updated = expectOk(
      await tenant.admin.certificateProfiles.update({
        params,
        body: {
          scepConfig: {
            challengeType: "dynamic",
            dynamicChallengeMaxPending: 1,
            dynamicChallengeExpiryMinutes: 5,
          } as never,
        },
      }),
    ).certificateProfile;
    expect(updated.scepConfig).toMatchObject({ challengeType: "dynamic", dynamicChallengeMaxPending: 1 });
    expect((await tenant.admin.certificateProfiles.update({ params, body: { acmeConfig: {} } })).status).toBe(400);
    expect(expectOk(await tenant.admin.certificateProfiles.issueScepChallenge({ params })).challenge).toBeTruthy();
    expect((await tenant.admin.certificateProfiles.issueScepChallenge({ params })).status).toBe(400);
    const api = (await createEnrolmentProfile(tenant, "api")).profile;
    expect((await tenant.admin.certificateProfiles.issueScepChallenge({ params: { profileId: api.id } })).status).toBe(
      400,
    );

    const outsider = await createIdentity(tenant, { projectId: project.id, projectRole: "no-access" });
    expect((await outsider.client.certificateProfiles.issueScepChallenge({ params })).status).toBe(403);
    expect(
      (
        await outsider.client.certificateProfiles.create({
          body: {
            projectId: project.id,
            caId: ca.id,
            slug: "scep-denied",
            enrollmentType: "scep",
            issuerType: "ca",
            scepConfig: { challengeType: "dynamic" },
          } as never,
        })
      ).status,
    ).toBe(403);
    expect((await outsider.client.certificateProfiles.update({ params, body: { description: "x" } })).status).toBe(403);
    const stranger = await createTenant();
    expect((await stranger.admin.certificateProfiles.issueScepChallenge({ params })).status).toBe(404);
  });
});
