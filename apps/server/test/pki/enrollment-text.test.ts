import { webcrypto } from "node:crypto";
import { FlattenedSign, exportJWK, generateKeyPair } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { x509 } from "../../src/modules/pki/x509";
import { getTestApp, type TestApp } from "../helpers/app";
import { createTenant, type Tenant } from "../helpers/tenant";
import { createAcmeProfile, createEnrolmentProfile } from "./pki-helpers";

/** A lone surrogate as a JSON escape: JSON.stringify writes "\ud800" for it, as a client could send. */
const LONE = "\ud800";

type Key = Awaited<ReturnType<typeof generateKeyPair>>["privateKey"];

describe("ACME and EST refuse text that is not well-formed Unicode", () => {
  let app: TestApp;
  let tenant: Tenant;
  beforeAll(async () => {
    app = await getTestApp();
    tenant = await createTenant(app);
  }, 120_000);

  const acmeBase = async (acmeConfig: Record<string, unknown> = { skipEabBinding: true }) => {
    const setup = await createAcmeProfile(tenant, app.baseUrl, { acmeConfig });
    return { ...setup, base: setup.directoryUrl.replace(/\/directory$/, "") };
  };
  const nonceOf = async (base: string) =>
    (await fetch(`${base}/new-nonce`, { method: "HEAD" })).headers.get("replay-nonce")!;
  const post = (url: string, jws: unknown) =>
    fetch(url, { method: "POST", headers: { "content-type": "application/jose+json" }, body: JSON.stringify(jws) });
  const sign = (payload: unknown, header: Record<string, unknown>, key: Key) =>
    new FlattenedSign(new TextEncoder().encode(JSON.stringify(payload)))
      .setProtectedHeader({ alg: "ES256", ...header })
      .sign(key);
  const accountKey = async () => {
    const { privateKey, publicKey } = await generateKeyPair("ES256");
    return { privateKey, jwk: await exportJWK(publicKey) };
  };
  const expectMalformed = async (res: Response) => {
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    expect(res.headers.get("replay-nonce")).toBeTruthy();
    expect(await res.json()).toMatchObject({ type: "urn:ietf:params:acme:error:malformed", status: 400 });
  };

  it("answers malformed to a new-account payload with a lone surrogate", async () => {
    const { base } = await acmeBase();
    const url = `${base}/new-account`;
    const { privateKey, jwk } = await accountKey();
    const payload = { termsOfServiceAgreed: true, contact: [`mailto:${LONE}@example.com`] };
    expect(JSON.stringify(payload)).toContain("\\ud800");
    await expectMalformed(await post(url, await sign(payload, { url, jwk, nonce: await nonceOf(base) }, privateKey)));

    // The same key with well-formed text still registers: nothing of the refused request was kept.
    const created = await post(
      url,
      await sign(
        { termsOfServiceAgreed: true, contact: ["mailto:ok@example.com"] },
        { url, jwk, nonce: await nonceOf(base) },
        privateKey,
      ),
    );
    expect(created.status).toBe(201);
  });

  it("answers malformed to a protected header with a lone surrogate", async () => {
    const { base } = await acmeBase();
    const url = `${base}/new-account`;
    const { privateKey, jwk } = await accountKey();
    const header = { url, jwk: { ...jwk, note: LONE }, nonce: await nonceOf(base) };
    await expectMalformed(await post(url, await sign({ termsOfServiceAgreed: true }, header, privateKey)));
  });

  it("answers malformed to a kid-signed account update with a lone surrogate", async () => {
    const { base } = await acmeBase();
    const { privateKey, jwk } = await accountKey();
    const created = await post(
      `${base}/new-account`,
      await sign(
        { termsOfServiceAgreed: true },
        { url: `${base}/new-account`, jwk, nonce: await nonceOf(base) },
        privateKey,
      ),
    );
    expect(created.status).toBe(201);
    const accountUrl = created.headers.get("location")!;
    const update = (contact: string) =>
      nonceOf(base).then(async (nonce) =>
        post(accountUrl, await sign({ contact: [contact] }, { url: accountUrl, kid: accountUrl, nonce }, privateKey)),
      );
    await expectMalformed(await update(`mailto:${LONE}@example.com`));
    const updated = await update("mailto:new@example.com");
    expect(updated.status).toBe(200);
    expect(await updated.json()).toMatchObject({ contact: ["mailto:new@example.com"] });
  });

  it("answers malformed to an external account binding whose inner JWS has a lone surrogate", async () => {
    const { base, eab } = await acmeBase({ skipEabBinding: false });
    const url = `${base}/new-account`;
    const { privateKey, jwk } = await accountKey();
    const hmac = new TextEncoder().encode(JSON.stringify({ ...jwk, note: LONE }));
    const binding = await new FlattenedSign(hmac)
      .setProtectedHeader({ alg: "HS256", kid: eab.eabKid, url })
      .sign(Buffer.from(eab.eabSecret, "base64url"));
    const payload = { termsOfServiceAgreed: true, externalAccountBinding: binding };
    await expectMalformed(await post(url, await sign(payload, { url, jwk, nonce: await nonceOf(base) }, privateKey)));
  });

  it("answers 400 to an EST enrollment whose CSR subject has a lone surrogate", async () => {
    const passphrase = "est-passphrase-for-devices";
    const { profile } = await createEnrolmentProfile(tenant, "est", {
      estConfig: { passphrase, disableBootstrapCaValidation: true },
    });
    const algorithm = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" };
    const keys = await webcrypto.subtle.generateKey(algorithm, true, ["sign", "verify"]);
    // A BMPString is UTF-16 on the wire, so it can carry a lone surrogate that a decoder hands on.
    const csr = await x509.Pkcs10CertificateRequestGenerator.create({
      name: new x509.Name([{ CN: [{ bmpString: `device${LONE}` }] }]),
      keys,
      signingAlgorithm: algorithm,
    });
    const res = await fetch(`${app.baseUrl}/.well-known/est/${profile.id}/simpleenroll`, {
      method: "POST",
      headers: {
        "content-type": "application/pkcs10",
        authorization: `Basic ${Buffer.from(`device:${passphrase}`).toString("base64")}`,
      },
      body: Buffer.from(csr.rawData).toString("base64"),
    });
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/well-formed/);
  });
});
