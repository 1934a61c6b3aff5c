import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { OCSPResponse, OCSPResponseStatus } from "@peculiar/asn1-ocsp";
import { AsnConvert } from "@peculiar/asn1-schema";
import { beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app";
import { createTenant, expectOk, type Tenant } from "../helpers/tenant";
import { run, workDir } from "./est-helpers";
import {
  createApiProfile,
  createCertProject,
  createIntermediateCa,
  createRootCa,
  describeCertificate,
  ensureOpenssl,
  expectIssued,
} from "./pki-helpers";

const PUBLIC_URL = "https://keyward.example.test";
const ocspPath = (caId: string) => `/api/v1/cert-manager/ca/internal/${caId}/ocsp`;

describe("OCSP responder of a CA (RFC 6960) with openssl ocsp", () => {
  let app: TestApp;
  let tenant: Tenant;
  let dir: string;
  let root: { id: string };
  let issuing: { id: string };
  let otherRoot: { id: string };
  const issued: string[] = [];

  const file = (name: string, text: string) => writeFileSync(join(dir, name), text.endsWith("\n") ? text : `${text}\n`);
  const ocsp = (args: string[]) => run("/usr/bin/openssl", ["ocsp", ...args], dir);
  /** The response status of a DER OCSPResponse. */
  const statusOf = (der: ArrayBuffer) => AsnConvert.parse(der, OCSPResponse).responseStatus;
  const post = (caId: string, body: Uint8Array | string) =>
    fetch(`${app.baseUrl}${ocspPath(caId)}`, {
      method: "POST",
      headers: { "content-type": "application/ocsp-request" },
      body,
    });

  beforeAll(async () => {
    ensureOpenssl();
    // Its own app: the Authority Information Access URL is built on PUBLIC_URL.
    tenant = await createTenant();
    app = tenant.app;
    dir = workDir();
    // The Authority Information Access URL is built on PUBLIC_URL, which the worker's app leaves unset:
    // set only while this file issues (a worker runs its files one after another), sparing an app of its own.
    const env = app.deps.env;
    const publicUrl = env.PUBLIC_URL;
    env.PUBLIC_URL = PUBLIC_URL;
    try {
      const project = await createCertProject(tenant);
      root = await createRootCa(tenant, project.id, { keyAlgorithm: "RSA_2048" });
      issuing = await createIntermediateCa(tenant, project.id, root.id);
      otherRoot = await createRootCa(tenant, project.id);
      const profile = await createApiProfile(tenant, project.id, issuing.id);
      for (const name of ["good", "revoked"]) {
        const cert = expectIssued(
          await tenant.admin.certificates.issue({
            body: {
              profileId: profile.id,
              commonName: `${name}.example.com`,
              ttl: "1d",
              keyAlgorithm: "EC_prime256v1",
            },
          }),
        );
        file(`${name}.pem`, cert.certificate);
        issued.push(cert.certificateId);
      }
    } finally {
      env.PUBLIC_URL = publicUrl;
    }
    const pem = async (caId: string) =>
      expectOk(await tenant.admin.certificateAuthorities.getCertificate({ params: { caId } })).certificate;
    file("root.pem", await pem(root.id));
    file("issuing.pem", await pem(issuing.id));
    file("other.pem", await pem(otherRoot.id));
  });

  it("puts the issuing CA's responder in the Authority Information Access of what it issues", () => {
    const leaf = describeCertificate(readFileSync(join(dir, "good.pem"), "utf8"));
    expect(leaf).toContain(`OCSP - URI:${PUBLIC_URL}${ocspPath(issuing.id)}`);
    const intermediate = describeCertificate(readFileSync(join(dir, "issuing.pem"), "utf8"));
    expect(intermediate).toContain(`OCSP - URI:${PUBLIC_URL}${ocspPath(root.id)}`);
    expect(describeCertificate(readFileSync(join(dir, "root.pem"), "utf8"))).not.toContain("OCSP - URI");
  });

  it("answers good, then revoked with time and reason at once, and unknown, signed, the nonce not echoed (POST)", async () => {
    const url = `${app.baseUrl}${ocspPath(issuing.id)}`;
    const ask = (hash: string) =>
      ocsp([
        "-url",
        url,
        `-${hash}`,
        "-issuer",
        "issuing.pem",
        "-CAfile",
        "root.pem",
        "-verify_other",
        "issuing.pem",
        "-cert",
        "good.pem",
        "-cert",
        "revoked.pem",
        "-serial",
        "0x4fedcba9876543210fedcba987654321",
      ]);
    const before = await ask("sha1");
    expect(before.stdout).toContain("revoked.pem: good");

    expectOk(
      await tenant.admin.certificates.revoke({
        params: { certificateId: issued[1]! },
        body: { revocationReason: "KEY_COMPROMISE" },
      }),
    );
    for (const hash of ["sha1", "sha256"]) {
      const out = await ask(hash);
      const text = `${out.stdout}${out.stderr}`;
      expect(out.code, text).toBe(0);
      expect(text).toContain("Response verify OK");
      // openssl sends a nonce; the answer, the same for every client, leaves it out, which openssl accepts.
      expect(text).toContain("WARNING: no nonce in response");
      expect(text).not.toMatch(/nonce verify error/i);
      expect(out.stdout).toContain("good.pem: good");
      expect(out.stdout).toMatch(
        /revoked\.pem: revoked\n\s+This Update: .*\n\s+Next Update: .*\n\s+Reason: keyCompromise\n\s+Revocation Time: /,
      );
      expect(out.stdout).toContain("0x4fedcba9876543210fedcba987654321: unknown");
    }
  });

  it("answers the GET form and for the CA certificates a CA signed, signed with an RSA key", async () => {
    const made = await ocsp(["-issuer", "root.pem", "-cert", "issuing.pem", "-reqout", "req.der"]);
    expect(made.code, made.stderr).toBe(0);
    const encoded = encodeURIComponent(readFileSync(join(dir, "req.der")).toString("base64"));
    const res = await fetch(`${app.baseUrl}${ocspPath(root.id)}/${encoded}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/ocsp-response");
    writeFileSync(join(dir, "resp.der"), Buffer.from(await res.arrayBuffer()));
    const out = await ocsp([
      "-reqin",
      "req.der",
      "-respin",
      "resp.der",
      "-issuer",
      "root.pem",
      "-CAfile",
      "root.pem",
      "-resp_text",
    ]);
    const text = `${out.stdout}${out.stderr}`;
    expect(out.code, text).toBe(0);
    expect(text).toContain("Response verify OK");
    expect(text).not.toContain("OCSP Nonce:");
    expect(text).toContain("Cert Status: good");
    expect(text).toContain("sha256WithRSAEncryption");
  });

  it("refuses garbage as malformedRequest and another issuer's certificate as unauthorized", async () => {
    const garbage = await post(issuing.id, "not an OCSP request");
    expect(garbage.status).toBe(200);
    expect(statusOf(await garbage.arrayBuffer())).toBe(OCSPResponseStatus.malformedRequest);
    const badGet = await fetch(`${app.baseUrl}${ocspPath(issuing.id)}/%%%`);
    expect(statusOf(await badGet.arrayBuffer())).toBe(OCSPResponseStatus.malformedRequest);

    const many = ["-issuer", "issuing.pem", "-reqout", "many.der"];
    for (let i = 1; i <= 11; i++) many.push("-serial", String(i));
    expect((await ocsp(many)).code).toBe(0);
    const tooMany = await post(issuing.id, readFileSync(join(dir, "many.der")));
    expect(statusOf(await tooMany.arrayBuffer())).toBe(OCSPResponseStatus.malformedRequest);
    const tooLarge = await post(issuing.id, new Uint8Array(64 * 1024));
    expect(statusOf(await tooLarge.arrayBuffer())).toBe(OCSPResponseStatus.malformedRequest);

    expect((await ocsp(["-issuer", "issuing.pem", "-cert", "good.pem", "-reqout", "good.der"])).code).toBe(0);
    const good = readFileSync(join(dir, "good.der"));
    for (const caId of [otherRoot.id, "00000000-0000-4000-8000-000000000000", "not-a-ca"]) {
      const res = await post(caId, good);
      expect(res.status).toBe(200);
      expect(statusOf(await res.arrayBuffer())).toBe(OCSPResponseStatus.unauthorized);
    }
  });
});
