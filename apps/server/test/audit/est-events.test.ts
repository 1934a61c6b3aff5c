import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { expectOk } from "../helpers/tenant";
import { estCall, estSuite, makeBootstrapIdentity, makeEstCsr, workDir } from "../pki/est-helpers";
import { auditEvents, eventTypes } from "./helpers";

const PASSPHRASE = "est-audit-passphrase-42";

/**
 * EST enrollments through curl over TLS: each recorded with the profile's EST client as actor
 * (estAccount, id = profile id), in the profile's organization and project, in the issuing
 * transaction; never the CSR, the passphrase or a certificate.
 */
describe("EST audit events", () => {
  const { estProfile } = estSuite();

  it("records enrollment and re-enrollment under the profile's EST client, and nothing for a refusal", async () => {
    const { tenant, project, profile, url } = await estProfile({
      passphrase: PASSPHRASE,
      disableBootstrapCaValidation: true,
    });
    const dir = workDir();
    const first = makeEstCsr(dir, "first", "/CN=audited-device", "DNS:audited-device.example.com");
    expect((await estCall(dir, `${url}/simpleenroll`, { csrFile: first.csrFile, user: "d:wrong" })).status).toBe(401);
    const enrolled = await estCall(dir, `${url}/simpleenroll`, { csrFile: first.csrFile, user: `d:${PASSPHRASE}` });
    expect(enrolled.status).toBe(200);
    writeFileSync(join(dir, "current.pem"), enrolled.pems[0]!);
    const second = makeEstCsr(dir, "second", "/CN=audited-device", "DNS:audited-device.example.com");
    const renewed = await estCall(dir, `${url}/simplereenroll`, {
      csrFile: second.csrFile,
      cert: "current.pem",
      key: first.keyFile,
    });
    expect(renewed.status).toBe(200);
    const [newer, older] = expectOk(
      await tenant.admin.certificates.list({ query: { projectId: project.id, profileId: profile.id } }),
    ).certificates;

    const events = await auditEvents(tenant, { actorType: "estAccount", actor: profile.id });
    expect(eventTypes(events)).toEqual(["est-renewal", "est-enrollment"]);
    for (const event of events) {
      expect(event).toMatchObject({
        orgId: tenant.orgId,
        projectId: project.id,
        projectName: project.name,
        actor: { type: "estAccount", metadata: { profileId: profile.id } },
        ipAddress: "127.0.0.1",
      });
      expect(event.userAgent).toMatch(/^curl\//);
    }
    expect(events[1]!.event.metadata).toEqual({
      profileId: profile.id,
      certificateId: older!.id,
      serialNumber: older!.serialNumber,
      commonName: "audited-device",
      authentication: "passphrase",
    });
    expect(events[0]!.event.metadata).toEqual({
      profileId: profile.id,
      certificateId: newer!.id,
      serialNumber: newer!.serialNumber,
      commonName: "audited-device",
      renewedFromCertificateId: older!.id,
      renewedFromSerialNumber: older!.serialNumber,
    });
    const text = JSON.stringify(events);
    expect(text).not.toContain(PASSPHRASE);
    expect(text).not.toMatch(/BEGIN|PRIVATE KEY/);
  });

  it("names how the client authenticated: bootstrap certificate, or a certificate the profile issued", async () => {
    const dir = workDir();
    const bootstrap = makeBootstrapIdentity(dir);
    const { tenant, profile, url } = await estProfile({ passphrase: PASSPHRASE, caChain: bootstrap.caPem });
    const device = makeEstCsr(dir, "device", "/CN=bootstrapped-device");
    const enrolled = await estCall(dir, `${url}/simpleenroll`, {
      csrFile: device.csrFile,
      user: `device:${PASSPHRASE}`,
      cert: bootstrap.cert,
      key: bootstrap.key,
    });
    expect(enrolled.status).toBe(200);
    writeFileSync(join(dir, "issued.pem"), enrolled.pems[0]!);
    const another = makeEstCsr(dir, "another", "/CN=second-device");
    const byIssued = await estCall(dir, `${url}/simpleenroll`, {
      csrFile: another.csrFile,
      cert: "issued.pem",
      key: device.keyFile,
    });
    expect(byIssued.status).toBe(200);

    const events = await auditEvents(tenant, { actorType: "estAccount", actor: profile.id });
    expect(events.map((event) => [event.event.type, event.event.metadata.authentication])).toEqual([
      ["est-enrollment", "issued-certificate"],
      ["est-enrollment", "passphrase-and-bootstrap-certificate"],
    ]);
  });
});
