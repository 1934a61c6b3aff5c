import * as acme from "acme-client";
import { FlattenedSign, exportJWK, generateKeyPair } from "jose";
import { describe, expect, it } from "vitest";
import { expectOk } from "../helpers/tenant";
import { acmeDnsSuite } from "./acme-helpers";
import { createAcmeProfile, createApiProfile, describeCertificate, verifyChain } from "./pki-helpers";

/** acme-client from npm with dns-01 answered by a loopback DNS server named in ACME_DNS_RESOLVER. */
describe("ACME with acme-client, dns-01 and raw requests", () => {
  const suite = acmeDnsSuite();

  const acmeProfile = (extra: Record<string, unknown> = {}) =>
    createAcmeProfile(suite.tenant, suite.app.baseUrl, extra);

  const clientFor = async (setup: Awaited<ReturnType<typeof acmeProfile>>, accountKey?: Buffer) =>
    new acme.Client({
      directoryUrl: setup.directoryUrl,
      accountKey: accountKey ?? (await acme.crypto.createPrivateEcdsaKey()),
      externalAccountBinding: { kid: setup.eab.eabKid, hmacKey: setup.eab.eabSecret },
      backoffAttempts: 3,
      backoffMin: 100,
      backoffMax: 500,
    });

  const dnsChallenge = {
    challengePriority: ["dns-01"],
    skipChallengeVerification: true,
    termsOfServiceAgreed: true,
    challengeCreateFn: async (authz: acme.Authorization, _c: unknown, keyAuthorization: string) => {
      suite.dns.set(`_acme-challenge.${authz.identifier.value}`, [keyAuthorization]);
    },
    challengeRemoveFn: async (authz: acme.Authorization) => {
      suite.dns.remove(`_acme-challenge.${authz.identifier.value}`);
    },
  };

  it("issues for dns-01 names and a wildcard, rolls the account key over and revokes", async () => {
    const setup = await acmeProfile();
    const accountKey = await acme.crypto.createPrivateEcdsaKey();
    const client = await clientFor(setup, accountKey);
    const [, csr] = await acme.crypto.createCsr({
      commonName: "dns01.keyward.test",
      altNames: ["dns01.keyward.test", "*.wild.keyward.test"],
    });
    const pem = await client.auto({ csr, ...dnsChallenge });
    const [leaf] = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g)!;
    expect(verifyChain(leaf, setup.caPem.certificate).ok).toBe(true);
    expect(describeCertificate(leaf)).toContain("DNS:*.wild.keyward.test");

    const newKey = await acme.crypto.createPrivateKey();
    await client.updateAccountKey(newKey);
    const rolled = new acme.Client({
      directoryUrl: setup.directoryUrl,
      accountKey: newKey,
      accountUrl: client.getAccountUrl(),
    });
    await expect(
      rolled.createOrder({ identifiers: [{ type: "dns", value: "after.keyward.test" }] }),
    ).resolves.toMatchObject({
      status: "pending",
    });
    const stale = new acme.Client({ directoryUrl: setup.directoryUrl, accountKey, accountUrl: client.getAccountUrl() });
    await expect(stale.createOrder({ identifiers: [{ type: "dns", value: "x.keyward.test" }] })).rejects.toThrow();

    await rolled.revokeCertificate(leaf, { reason: 4 });
    const { certificates } = expectOk(
      await suite.tenant.admin.certificates.list({
        query: { projectId: setup.profile.projectId, profileId: setup.profile.id },
      }),
    );
    expect(certificates[0]).toMatchObject({ status: "revoked", revocationReason: "SUPERSEDED" });
    await expect(rolled.revokeCertificate(leaf)).rejects.toThrow(/already revoked/i);
  });

  it("fails an order whose TXT record is missing, and holds CSRs to the order and the profile", async () => {
    const setup = await acmeProfile({ defaults: { keyAlgorithm: "EC_prime256v1" } });
    const client = await clientFor(setup);
    await client.createAccount({ termsOfServiceAgreed: true });
    const order = await client.createOrder({ identifiers: [{ type: "dns", value: "missing.keyward.test" }] });
    const [authz] = await client.getAuthorizations(order);
    const challenge = authz!.challenges.find((c) => c.type === "dns-01")!;
    await expect(client.completeChallenge(challenge)).resolves.toMatchObject({ status: "invalid" });
    expect((await client.getOrder(order)).status).toBe("invalid");

    const good = await client.createOrder({ identifiers: [{ type: "dns", value: "good.keyward.test" }] });
    const [goodAuthz] = await client.getAuthorizations(good);
    const dnsOne = goodAuthz!.challenges.find((c) => c.type === "dns-01")!;
    suite.dns.set("_acme-challenge.good.keyward.test", [await client.getChallengeKeyAuthorization(dnsOne)]);
    await client.completeChallenge(dnsOne);
    await client.waitForValidStatus(good);
    const [, otherName] = await acme.crypto.createCsr(
      { commonName: "other.keyward.test" },
      await acme.crypto.createPrivateEcdsaKey(),
    );
    await expect(client.finalizeOrder(good, otherName)).rejects.toThrow(/exactly the order's identifiers/);
    const [, rsa] = await acme.crypto.createCsr(
      { commonName: "good.keyward.test" },
      await acme.crypto.createPrivateRsaKey(),
    );
    await expect(client.finalizeOrder(good, rsa)).rejects.toThrow(/only for EC_prime256v1/);
    const [, fine] = await acme.crypto.createCsr(
      { commonName: "good.keyward.test" },
      await acme.crypto.createPrivateEcdsaKey(),
    );
    await expect(client.finalizeOrder(good, fine)).resolves.toMatchObject({ status: "valid" });
  });

  it("skips challenges when the profile skips DNS ownership verification", async () => {
    const setup = await acmeProfile({ acmeConfig: { skipDnsOwnershipVerification: true } });
    const client = await clientFor(setup);
    await client.createAccount({ termsOfServiceAgreed: true });
    const order = await client.createOrder({ identifiers: [{ type: "dns", value: "trusted.keyward.test" }] });
    expect(order.status).toBe("ready");
    const [, csr] = await acme.crypto.createCsr({ commonName: "trusted.keyward.test" });
    const finalized = await client.finalizeOrder(order, csr);
    expect(finalized.status).toBe("valid");
    expect(
      verifyChain(
        (await client.getCertificate(finalized)).split("-----END CERTIFICATE-----")[0] + "-----END CERTIFICATE-----\n",
        setup.caPem.certificate,
      ).ok,
    ).toBe(true);
  });

  it("takes over a validation abandoned in processing, but not one still running", async () => {
    const setup = await acmeProfile();
    const client = await clientFor(setup);
    await client.createAccount({ termsOfServiceAgreed: true });
    const order = await client.createOrder({ identifiers: [{ type: "dns", value: "stuck.keyward.test" }] });
    const [authz] = await client.getAuthorizations(order);
    const challenge = authz!.challenges.find((c) => c.type === "dns-01")!;
    const id = challenge.url.split("/").pop()!;
    const setProcessing = (updatedAt: Date) =>
      suite.app.deps.db
        .updateTable("pki_acme_challenges")
        .set({ status: "processing", updated_at: updatedAt })
        .where("id", "=", id)
        .execute();
    suite.dns.set("_acme-challenge.stuck.keyward.test", [await client.getChallengeKeyAuthorization(challenge)]);
    await setProcessing(new Date());
    await expect(client.completeChallenge(challenge)).resolves.toMatchObject({ status: "processing" });
    await setProcessing(new Date(Date.now() - 5 * 60_000));
    await expect(client.completeChallenge(challenge)).resolves.toMatchObject({ status: "valid" });
    expect((await client.getOrder(order)).status).toBe("ready");
  });

  describe("raw protocol answers", () => {
    /** A JWS over `payload` by a fresh ES256 key carried as jwk. */
    const signed = async (url: string, payload: unknown, header: Record<string, unknown>) => {
      const { privateKey, publicKey } = await generateKeyPair("ES256");
      const jwk = await exportJWK(publicKey);
      const body = new TextEncoder().encode(JSON.stringify(payload));
      const jws = await new FlattenedSign(body)
        .setProtectedHeader({ alg: "ES256", url, jwk, ...header })
        .sign(privateKey);
      return { protected: jws.protected!, payload: jws.payload, signature: jws.signature };
    };
    const post = (url: string, body: unknown, contentType = "application/jose+json") =>
      fetch(url, { method: "POST", headers: { "content-type": contentType }, body: JSON.stringify(body) });
    const nonceOf = async (base: string) =>
      (await fetch(`${base}/new-nonce`, { method: "HEAD" })).headers.get("replay-nonce")!;

    it("serve the directory and nonces, and answer problems as problem+json", async () => {
      const setup = await acmeProfile();
      const base = setup.directoryUrl.replace(/\/directory$/, "");
      const directory = (await (await fetch(setup.directoryUrl)).json()) as Record<string, unknown>;
      expect(directory).toMatchObject({ newAccount: `${base}/new-account`, meta: { externalAccountRequired: true } });
      expect((await fetch(`${base}/new-nonce`)).status).toBe(204);
      const nonce = await nonceOf(base);
      expect(nonce).toMatch(/^[A-Za-z0-9_-]{16,}$/);

      const missing = await fetch(
        `${suite.app.baseUrl}/api/v1/cert-manager/acme/profiles/00000000-0000-4000-8000-000000000000/directory`,
      );
      expect(missing.status).toBe(404);
      expect(missing.headers.get("content-type")).toContain("application/problem+json");
      const apiProfile = await createApiProfile(suite.tenant, setup.profile.projectId, setup.profile.caId!);
      expect(
        (await fetch(`${suite.app.baseUrl}/api/v1/cert-manager/acme/profiles/${apiProfile.id}/directory`)).status,
      ).toBe(404);

      const url = `${base}/new-account`;
      const badNonce = await post(url, await signed(url, { termsOfServiceAgreed: true }, { nonce: "bm9ub25jZQ" }));
      expect(badNonce.status).toBe(400);
      expect(badNonce.headers.get("replay-nonce")).toBeTruthy();
      expect(await badNonce.json()).toMatchObject({ type: "urn:ietf:params:acme:error:badNonce" });

      const wrongUrl = await post(url, await signed(`${base}/new-order`, {}, { nonce: await nonceOf(base) }));
      expect(wrongUrl.status).toBe(403);
      expect(await wrongUrl.json()).toMatchObject({ type: "urn:ietf:params:acme:error:unauthorized" });

      const unsigned = await signed(url, {}, { nonce: await nonceOf(base) });
      const none = {
        ...unsigned,
        protected: Buffer.from(JSON.stringify({ alg: "none", url, nonce: await nonceOf(base), jwk: {} })).toString(
          "base64url",
        ),
        signature: "",
      };
      const noneAnswer = await post(url, none);
      expect(noneAnswer.status).toBe(400);
      expect(await noneAnswer.json()).toMatchObject({ type: "urn:ietf:params:acme:error:badSignatureAlgorithm" });

      const asJson = await post(url, await signed(url, {}, { nonce: await nonceOf(base) }), "application/json");
      expect(asJson.status).toBe(415);

      const noEab = await post(url, await signed(url, { termsOfServiceAgreed: true }, { nonce: await nonceOf(base) }));
      expect(noEab.status).toBe(400);
      expect(await noEab.json()).toMatchObject({ type: "urn:ietf:params:acme:error:externalAccountRequired" });

      const onlyExisting = await post(
        url,
        await signed(url, { onlyReturnExisting: true }, { nonce: await nonceOf(base) }),
      );
      expect(await onlyExisting.json()).toMatchObject({ type: "urn:ietf:params:acme:error:accountDoesNotExist" });
    });

    it("keep one account's orders from another", async () => {
      const setup = await acmeProfile();
      const owner = await clientFor(setup);
      await owner.createAccount({ termsOfServiceAgreed: true });
      const order = await owner.createOrder({ identifiers: [{ type: "dns", value: "mine.keyward.test" }] });
      const intruder = await clientFor(setup);
      await intruder.createAccount({ termsOfServiceAgreed: true });
      await expect(intruder.getOrder(order)).rejects.toThrow(/not found/i);
      await expect(intruder.getAuthorizations(order)).rejects.toThrow(/not found/i);
    });
  });
});
