import { describe, expect, it } from "vitest";
import { createTenant, expectOk, uniqueName } from "../helpers/tenant";
import { createCertProject, createRootCa, ensureOpenssl, openssl } from "./pki-helpers";

describe("subject names of certificate authorities", () => {
  it("keeps subject text literally: a leading '#' is not hex DER and quotes are not unescaped", async () => {
    const tenant = await createTenant();
    const project = await createCertProject(tenant);
    const fields = { commonName: "#0c03616263", organization: 'a "b" c', ou: "#not-hex", locality: "x\\2Cy" };
    const ca = await createRootCa(tenant, project.id, fields);
    expect(ca.configuration).toMatchObject(fields);
    const { certificate } = expectOk(
      await tenant.admin.certificateAuthorities.getCertificate({ params: { caId: ca.id } }),
    );
    ensureOpenssl();
    const { output } = openssl(["x509", "-noout", "-subject", "-nameopt", "multiline,utf8", "-in", "{cert}"], {
      cert: certificate,
    });
    expect(output).toContain("commonName                = #0c03616263");
    expect(output).toContain('organizationName          = a "b" c');
    expect(output).toContain("organizationalUnitName    = #not-hex");
    // openssl prints a backslash doubled; unescaped, the value would have read "x,y".
    expect(output).toContain("localityName              = x\\\\2Cy");
  });

  it("creates an intermediate CA whose common name starts with '#' instead of failing with 500", async () => {
    const tenant = await createTenant();
    const project = await createCertProject(tenant);
    const root = await createRootCa(tenant, project.id);
    const res = await tenant.admin.certificateAuthorities.create({
      body: {
        projectId: project.id,
        name: uniqueName("issuing"),
        configuration: { type: "intermediate", parentCaId: root.id, commonName: "#x", keyAlgorithm: "EC_prime256v1" },
      },
    });
    expect(res.status).toBe(200);
  });
});
