import { randomUUID } from "node:crypto";
import { FlattenedSign, exportJWK, generateKeyPair } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app";
import { createIdentity, createTenant, expectOk, uniqueName } from "../helpers/tenant";
import { createApiProfile, createCustomRole, setupCaProject } from "./pki-helpers";

const acmeProfile = async () => {
  const { tenant, project, ca } = await setupCaProject();
  const profile = expectOk(
    await tenant.admin.certificateProfiles.create({
      body: { projectId: project.id, caId: ca.id, slug: uniqueName("acme"), enrollmentType: "acme", issuerType: "ca" },
    }),
  ).certificateProfile;
  return { tenant, project, ca, profile };
};

describe("ACME external account binding keys", () => {
  it("reveals the key id and HMAC key, keeps it across updates, and rotates it", async () => {
    const { tenant, profile } = await acmeProfile();
    const params = { profileId: profile.id };
    const first = expectOk(await tenant.admin.certificateProfiles.revealAcmeEabSecret({ params }));
    expect(first.eabKid).toBe(profile.id);
    expect(Buffer.from(first.eabSecret, "base64url")).toHaveLength(32);
    expectOk(
      await tenant.admin.certificateProfiles.update({
        params,
        body: { acmeConfig: { skipDnsOwnershipVerification: true } },
      }),
    );
    expect(expectOk(await tenant.admin.certificateProfiles.revealAcmeEabSecret({ params })).eabSecret).toBe(
      first.eabSecret,
    );
    const rotated = expectOk(await tenant.admin.certificateProfiles.rotateAcmeEabSecret({ params }));
    expect(rotated.eabSecret).not.toBe(first.eabSecret);
    expect(expectOk(await tenant.admin.certificateProfiles.revealAcmeEabSecret({ params })).eabSecret).toBe(
      rotated.eabSecret,
    );
  });

  it("answers 400 for other enrollment types, 401, 404 and 403", async () => {
    const { tenant, project, ca, profile } = await acmeProfile();
    const api = await createApiProfile(tenant, project.id, ca.id);
    const notAcme = await tenant.admin.certificateProfiles.revealAcmeEabSecret({ params: { profileId: api.id } });
    expect(notAcme.status).toBe(400);
    const params = { profileId: profile.id };
    expect((await tenant.anonymous.certificateProfiles.revealAcmeEabSecret({ params })).status).toBe(401);
    expect(
      (await tenant.admin.certificateProfiles.revealAcmeEabSecret({ params: { profileId: randomUUID() } })).status,
    ).toBe(404);
    const other = await createTenant();
    expect((await other.admin.certificateProfiles.revealAcmeEabSecret({ params })).status).toBe(404);
    const role = await createCustomRole(tenant, project.id, [
      { subject: "certificate-profiles", action: ["read", "reveal-acme-eab-secret"], inverted: false },
    ]);
    const revealer = await createIdentity(tenant, { projectId: project.id, projectRole: role });
    expect((await revealer.client.certificateProfiles.revealAcmeEabSecret({ params })).status).toBe(200);
    expect((await revealer.client.certificateProfiles.rotateAcmeEabSecret({ params })).status).toBe(403);
  });
});

describe("ACME behind PUBLIC_URL", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ PUBLIC_URL: "https://keyward.example.com/" });
  }, 120_000);
  afterAll(async () => {
    await app?.close();
  });

  it("advertises absolute URLs on the public base and checks JWS urls against it", async () => {
    const tenant = await createTenant(app);
    const { id: projectId } = expectOk(
      await tenant.admin.projects.create({ body: { projectName: uniqueName("p"), type: "cert-manager" } }),
    ).project;
    const ca = expectOk(
      await tenant.admin.certificateAuthorities.create({
        body: {
          projectId,
          name: uniqueName("root"),
          configuration: { type: "root", commonName: "Root", keyAlgorithm: "EC_prime256v1" },
        } as never,
      }),
    ).certificateAuthority;
    const profile = expectOk(
      await tenant.admin.certificateProfiles.create({
        body: { projectId, caId: ca.id, slug: "public", enrollmentType: "acme", issuerType: "ca" },
      }),
    ).certificateProfile;
    const path = `/api/v1/cert-manager/acme/profiles/${profile.id}/directory`;
    expect(profile.acmeConfig!.directoryUrl).toBe(`https://keyward.example.com${path}`);
    const directory = (await (await fetch(`${app.baseUrl}${path}`)).json()) as { newAccount: string };
    expect(directory.newAccount).toBe(
      `https://keyward.example.com/api/v1/cert-manager/acme/profiles/${profile.id}/new-account`,
    );
    // A client reaching the internal address signs the public URL it was told, as RFC 8555 requires.
    const base = `${app.baseUrl}/api/v1/cert-manager/acme/profiles/${profile.id}`;
    const send = async (signedUrl: string) => {
      const nonce = (await fetch(`${base}/new-nonce`, { method: "HEAD" })).headers.get("replay-nonce")!;
      const { privateKey, publicKey } = await generateKeyPair("ES256");
      const jws = await new FlattenedSign(new TextEncoder().encode("{}"))
        .setProtectedHeader({ alg: "ES256", url: signedUrl, nonce, jwk: await exportJWK(publicKey) })
        .sign(privateKey);
      const res = await fetch(`${base}/new-account`, {
        method: "POST",
        headers: { "content-type": "application/jose+json" },
        body: JSON.stringify(jws),
      });
      return (await res.json()) as { type: string };
    };
    expect((await send(`${base}/new-account`)).type).toBe("urn:ietf:params:acme:error:unauthorized");
    expect((await send(directory.newAccount)).type).toBe("urn:ietf:params:acme:error:externalAccountRequired");
  });
});
