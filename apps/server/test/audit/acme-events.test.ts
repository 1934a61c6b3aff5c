import { createPrivateKey, createPublicKey } from "node:crypto";
import * as acme from "acme-client";
import { FlattenedSign, type JWK } from "jose";
import type { AuditLog } from "@keyward/contract";
import { describe, expect, it } from "vitest";
import { expectOk } from "../helpers/tenant";
import { acmeDnsSuite } from "../pki/acme-helpers";
import { createAcmeProfile } from "../pki/pki-helpers";
import { auditEvents, eventTypes } from "./helpers";

const lastSegment = (url: string) => url.split("/").pop()!;
const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/**
 * The ACME protocol's changes through acme-client (dns-01 answered by a loopback DNS server): each
 * recorded with the account (or the profile's client) as actor, in the profile's organization and
 * project, with ids, names, thumbprints and serials only.
 */
describe("ACME audit events", () => {
  const suite = acmeDnsSuite();

  const acmeProfile = async () => {
    const { project, profile, eab, directoryUrl } = await createAcmeProfile(suite.tenant, suite.app.baseUrl);
    const client = new acme.Client({
      directoryUrl,
      accountKey: await acme.crypto.createPrivateEcdsaKey(),
      externalAccountBinding: { kid: eab.eabKid, hmacKey: eab.eabSecret },
      backoffAttempts: 3,
      backoffMin: 100,
      backoffMax: 500,
    });
    return { project, profile, eab, client, directoryUrl };
  };

  /** Every stored event of this app's database, as text: no secret may be in it. */
  const allStoredEvents = async () =>
    JSON.stringify(
      await suite.app.deps.db
        .selectFrom("audit_logs")
        .select(["actor_metadata", "event_metadata", "project_name", "user_agent"])
        .execute(),
    );

  const withType = (events: AuditLog[], type: string) => {
    const found = events.filter((event) => event.event.type === type);
    expect(found, `${type} in ${eventTypes(events).join(", ")}`).toHaveLength(1);
    return found[0]!;
  };

  it("records an account's life: account, order, challenge, finalization, download and revocation", async () => {
    const { project, profile, eab, client } = await acmeProfile();
    const certificateKey = await acme.crypto.createPrivateEcdsaKey();
    const [, csr] = await acme.crypto.createCsr({ commonName: "audit.keyward.test" }, certificateKey);

    await client.createAccount({ termsOfServiceAgreed: true });
    const accountId = lastSegment(client.getAccountUrl());
    const order = await client.createOrder({ identifiers: [{ type: "dns", value: "audit.keyward.test" }] });
    const orderId = lastSegment(order.url);
    const [authz] = await client.getAuthorizations(order);
    const challenge = authz!.challenges.find((c) => c.type === "dns-01")!;
    suite.dns.set("_acme-challenge.audit.keyward.test", [await client.getChallengeKeyAuthorization(challenge)]);
    await client.completeChallenge(challenge);
    await client.waitForValidStatus(order);
    // A CSR for other names is refused: its finalization changes nothing and records nothing.
    const [, otherCsr] = await acme.crypto.createCsr({ commonName: "other.keyward.test" });
    await expect(client.finalizeOrder(order, otherCsr)).rejects.toThrow(/exactly the order's identifiers/);
    const finalized = await client.finalizeOrder(order, csr);
    const pem = await client.getCertificate(finalized);
    const leaf = pem.match(PEM_CERTIFICATE)![0];
    await client.revokeCertificate(leaf, { reason: 4 });
    const [certificate] = expectOk(
      await suite.tenant.admin.certificates.list({ query: { projectId: project.id, profileId: profile.id } }),
    ).certificates;

    const byAccount = await auditEvents(suite.tenant, { actorType: "acmeAccount", actor: accountId });
    expect(eventTypes(byAccount).reverse()).toEqual([
      "create-acme-order",
      "respond-to-acme-challenge",
      "pass-acme-challenge",
      "finalize-acme-order",
      "download-acme-certificate",
      "revoke-acme-certificate",
    ]);
    for (const event of byAccount) {
      expect(event).toMatchObject({
        orgId: suite.tenant.orgId,
        projectId: project.id,
        projectName: project.name,
        actor: { type: "acmeAccount", metadata: { profileId: profile.id, accountId } },
        ipAddress: "127.0.0.1",
        userAgentType: "other",
        event: { metadata: { profileId: profile.id, accountId } },
      });
      expect(event.userAgent).toMatch(/^node-acme-client\//);
    }
    const challengeNames = {
      orderId,
      challengeId: lastSegment(challenge.url),
      challengeType: "dns-01",
      identifier: "audit.keyward.test",
    };
    expect(withType(byAccount, "create-acme-order").event.metadata).toMatchObject({
      orderId,
      identifiers: ["audit.keyward.test"],
    });
    expect(withType(byAccount, "respond-to-acme-challenge").event.metadata).toMatchObject(challengeNames);
    expect(withType(byAccount, "pass-acme-challenge").event.metadata).toMatchObject(challengeNames);
    expect(withType(byAccount, "finalize-acme-order").event.metadata).toMatchObject({
      orderId,
      certificateId: certificate!.id,
      serialNumber: certificate!.serialNumber,
      commonName: "audit.keyward.test",
    });
    expect(withType(byAccount, "download-acme-certificate").event.metadata).toMatchObject({
      orderId,
      certificateId: certificate!.id,
    });
    expect(withType(byAccount, "revoke-acme-certificate").event.metadata).toMatchObject({
      certificateId: certificate!.id,
      serialNumber: certificate!.serialNumber,
      revocationReason: "SUPERSEDED",
      signedWith: "account-key",
    });

    // The account was created by the profile's client (no account signed that request).
    const byProfile = await auditEvents(suite.tenant, { actorType: "acmeProfile", actor: profile.id });
    expect(eventTypes(byProfile)).toEqual(["create-acme-account"]);
    expect(byProfile[0]).toMatchObject({
      orgId: suite.tenant.orgId,
      projectId: project.id,
      actor: { type: "acmeProfile", metadata: { profileId: profile.id } },
      event: { metadata: { profileId: profile.id, accountId, externalAccountBinding: true } },
    });
    expect(byProfile[0]!.event.metadata.thumbprint).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const stored = await allStoredEvents();
    expect(stored).not.toContain(eab.eabSecret);
    expect(stored).not.toContain(csr.toString("base64url").slice(0, 64));
    expect(stored).not.toContain(challenge.token);
    expect(stored).not.toMatch(/PRIVATE KEY|BEGIN CERTIFICATE|eyJ[A-Za-z0-9_-]{8,}/);
  });

  it("records a failed challenge, a key change, a revocation signed by the certificate's key and a deactivation", async () => {
    const { project, profile, client, directoryUrl } = await acmeProfile();
    await client.createAccount({ termsOfServiceAgreed: true });
    const accountId = lastSegment(client.getAccountUrl());

    const failing = await client.createOrder({ identifiers: [{ type: "dns", value: "missing.keyward.test" }] });
    const [failingAuthz] = await client.getAuthorizations(failing);
    const dnsOne = failingAuthz!.challenges.find((c) => c.type === "dns-01")!;
    await expect(client.completeChallenge(dnsOne)).resolves.toMatchObject({ status: "invalid" });

    const certificateKeyPem = await acme.crypto.createPrivateEcdsaKey();
    const [, csr] = await acme.crypto.createCsr({ commonName: "by-key.keyward.test" }, certificateKeyPem);
    const pem = await client.auto({
      csr,
      challengePriority: ["dns-01"],
      skipChallengeVerification: true,
      termsOfServiceAgreed: true,
      challengeCreateFn: async (authz: acme.Authorization, _c: unknown, keyAuthorization: string) => {
        suite.dns.set(`_acme-challenge.${authz.identifier.value}`, [keyAuthorization]);
      },
      challengeRemoveFn: async () => undefined,
    });
    const leaf = pem.match(PEM_CERTIFICATE)![0];

    const newKey = await acme.crypto.createPrivateKey();
    await client.updateAccountKey(newKey);
    const rolled = new acme.Client({ directoryUrl, accountKey: newKey, accountUrl: client.getAccountUrl() });

    // Revoked by a JWS that the certificate's own key signed (RFC 8555 §7.6): no account acts.
    const base = directoryUrl.replace(/\/directory$/, "");
    const url = `${base}/revoke-cert`;
    const nonce = (await fetch(`${base}/new-nonce`, { method: "HEAD" })).headers.get("replay-nonce")!;
    const certificateKey = createPrivateKey(certificateKeyPem);
    const jwk = createPublicKey(certificateKey).export({ format: "jwk" }) as JWK;
    const certificateDer = Buffer.from(leaf.replace(/-----[A-Z ]+-----|\s/g, ""), "base64");
    const jws = await new FlattenedSign(
      new TextEncoder().encode(JSON.stringify({ certificate: certificateDer.toString("base64url"), reason: 1 })),
    )
      .setProtectedHeader({ alg: "ES256", url, nonce, jwk })
      .sign(certificateKey);
    const revoked = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/jose+json" },
      body: JSON.stringify(jws),
    });
    expect(revoked.status).toBe(200);

    await rolled.updateAccount({ status: "deactivated" });

    const byAccount = await auditEvents(suite.tenant, { actorType: "acmeAccount", actor: accountId });
    expect(eventTypes(byAccount).reverse()).toEqual([
      "create-acme-order",
      "respond-to-acme-challenge",
      "fail-acme-challenge",
      "create-acme-order",
      "respond-to-acme-challenge",
      "pass-acme-challenge",
      "finalize-acme-order",
      "download-acme-certificate",
      "change-acme-account-key",
      "deactivate-acme-account",
    ]);
    expect(withType(byAccount, "fail-acme-challenge").event.metadata).toMatchObject({
      orderId: lastSegment(failing.url),
      challengeId: lastSegment(dnsOne.url),
      errorType: expect.stringMatching(/^urn:ietf:params:acme:error:/),
    });
    const keyChange = withType(byAccount, "change-acme-account-key").event.metadata;
    expect(keyChange.thumbprint).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(keyChange.thumbprint).not.toBe(keyChange.previousThumbprint);
    expect(withType(byAccount, "deactivate-acme-account").event.metadata).toMatchObject({ status: "deactivated" });

    const [certificate] = expectOk(
      await suite.tenant.admin.certificates.list({ query: { projectId: project.id, profileId: profile.id } }),
    ).certificates;
    const byProfile = await auditEvents(suite.tenant, {
      actorType: "acmeProfile",
      actor: profile.id,
      eventType: "revoke-acme-certificate",
    });
    expect(byProfile).toHaveLength(1);
    expect(byProfile[0]).toMatchObject({
      orgId: suite.tenant.orgId,
      projectId: project.id,
      actor: { type: "acmeProfile", metadata: { profileId: profile.id } },
      event: {
        metadata: {
          certificateId: certificate!.id,
          serialNumber: certificate!.serialNumber,
          revocationReason: "KEY_COMPROMISE",
          signedWith: "certificate-key",
        },
      },
    });
    expect(byProfile[0]!.event.metadata).not.toHaveProperty("accountId");
    expect(await allStoredEvents()).not.toMatch(/PRIVATE KEY|BEGIN CERTIFICATE|eyJ[A-Za-z0-9_-]{8,}/);
  });
});
