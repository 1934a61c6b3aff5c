import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  SSH_KEY_ALGORITHMS,
  SshKeyError,
  SshReader,
  SshWriter,
  algorithmOfKeyObject,
  buildKrl,
  fingerprintSha256,
  generateSshKeyPair,
  isKrl,
  mpintBody,
  opensshPrivateKey,
  parsePublicKeyLine,
  publicKeyLineOf,
  randomSerial,
  signCertificate,
  type SignCertificateInput,
  type SshKeyAlgorithm,
  type SshKeyPair,
  type SshPublicKey,
} from "../../src/modules/ssh/wire";
import { ensureDebianPackages } from "../services/debian";

/** The wire formats checked against the real OpenSSH tools: `ssh-keygen -L`, `-y`, `-l`, `-s` and `-Q`. */

const SSH_KEYGEN = "/usr/bin/ssh-keygen";
let dir: string;
let fileCount = 0;

const keygen = (args: string[]) => {
  const r = spawnSync(SSH_KEYGEN, args, { encoding: "utf8", env: { ...process.env, TZ: "UTC" } });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
};
/** Writes `text` to a new file of the work directory and returns its path. */
const file = (name: string, text: string | Buffer, mode = 0o644) => {
  const path = join(dir, `${fileCount++}-${name}`);
  writeFileSync(path, text, { mode });
  return path;
};
/** A key pair made by ssh-keygen itself: its public line and its private key file. */
const keygenKey = (type: string, bits?: number) => {
  const path = join(dir, `${fileCount++}-keygen-${type}`);
  const sized = bits ? ["-b", String(bits)] : [];
  const r = keygen(["-q", "-t", type, ...sized, "-N", "", "-C", `made-by-keygen-${type}`, "-f", path]);
  expect(r.status, r.out).toBe(0);
  return { line: readFileSync(`${path}.pub`, "utf8").trim(), privatePath: path };
};

type CertInfo = { fields: Record<string, string>; lists: Record<string, string[]> };
/** `ssh-keygen -L` read into its fields ("Serial") and lists ("Principals"); it verifies the signature. */
const certInfo = (certLine: string): CertInfo => {
  const r = keygen(["-L", "-f", file("cert.pub", `${certLine}\n`)]);
  expect(r.status, r.out).toBe(0);
  const info: CertInfo = { fields: {}, lists: {} };
  let list: string[] = [];
  for (const raw of r.out.split("\n").slice(1)) {
    const item = /^\s{16}(\S.*)$/.exec(raw);
    const field = /^\s{8}(\S[^:]*):\s?(.*)$/.exec(raw);
    if (item) list.push(item[1]!.trim());
    else if (field) {
      info.fields[field[1]!] = field[2]!.trim();
      list = info.lists[field[1]!] = [];
    }
  }
  return info;
};

const at = (iso: string) => new Date(iso);
const VALID_AFTER = at("2030-01-02T03:04:05Z");
const VALID_BEFORE = at("2030-01-02T04:04:05Z");

let cas: Record<SshKeyAlgorithm, SshKeyPair>;
let subjects: Record<string, SshPublicKey>;

/** A hand-built security-key public line (no hardware needed to sign for one). */
const skEd25519Line = (pair: SshKeyPair) => {
  const pk = new SshReader(pair.publicKeyBlob);
  pk.string();
  const blob = new SshWriter().string("sk-ssh-ed25519@openssh.com").string(pk.string()).string("ssh:").toBuffer();
  return publicKeyLineOf(blob, "fido");
};

beforeAll(() => {
  ensureDebianPackages(SSH_KEYGEN, ["openssh-client"]);
  dir = mkdtempSync(join(tmpdir(), "keyward-ssh-wire-"));
  cas = Object.fromEntries(SSH_KEY_ALGORITHMS.map((a) => [a, generateSshKeyPair(a)])) as typeof cas;
  const of = (line: string) => {
    const { type, blob } = parsePublicKeyLine(line);
    return { type, blob };
  };
  subjects = {
    ed25519: of(generateSshKeyPair("ED25519").publicKeyLine),
    ecdsa256: of(generateSshKeyPair("EC_prime256v1").publicKeyLine),
    ecdsa384: of(generateSshKeyPair("EC_secp384r1").publicKeyLine),
    rsa2048: of(generateSshKeyPair("RSA_2048").publicKeyLine),
    keygenEd25519: of(keygenKey("ed25519").line),
    keygenEcdsa521: of(keygenKey("ecdsa", 521).line),
    skEd25519: of(skEd25519Line(generateSshKeyPair("ED25519"))),
  };
}, 60_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const USER_EXTENSIONS = [
  "permit-X11-forwarding",
  "permit-agent-forwarding",
  "permit-port-forwarding",
  "permit-pty",
  "permit-user-rc",
];
const SIGNATURE_NAME: Record<SshKeyAlgorithm, string> = {
  ED25519: "ssh-ed25519",
  EC_prime256v1: "ecdsa-sha2-nistp256",
  EC_secp384r1: "ecdsa-sha2-nistp384",
  RSA_2048: "rsa-sha2-512",
  RSA_4096: "rsa-sha2-512",
};

const sign = (ca: SshKeyAlgorithm, subject: SshPublicKey, extra: Partial<SignCertificateInput> = {}) =>
  signCertificate({
    caPrivateKey: cas[ca].privateKey,
    caPublicBlob: cas[ca].publicKeyBlob,
    subject,
    serial: 4242n,
    certType: "user",
    keyId: "user alice@example.com",
    principals: ["alice", "deploy"],
    validAfter: VALID_AFTER,
    validBefore: VALID_BEFORE,
    ...extra,
  });

describe("certificates read by ssh-keygen -L", () => {
  const cases: [SshKeyAlgorithm, string, string][] = [
    ...SSH_KEY_ALGORITHMS.map((ca): [SshKeyAlgorithm, string, string] => [ca, "ed25519", "ssh-ed25519"]),
    ["ED25519", "ecdsa256", "ecdsa-sha2-nistp256"],
    ["ED25519", "ecdsa384", "ecdsa-sha2-nistp384"],
    ["ED25519", "rsa2048", "ssh-rsa"],
    ["ED25519", "keygenEd25519", "ssh-ed25519"],
    ["EC_secp384r1", "keygenEcdsa521", "ecdsa-sha2-nistp521"],
    ["RSA_2048", "skEd25519", "sk-ssh-ed25519"],
  ];

  it.each(cases)("a %s CA signs a %s user key", (ca, subjectName, keyType) => {
    const subject = subjects[subjectName]!;
    const serial = randomSerial();
    const line = sign(ca, subject, { serial });
    expect(line.startsWith(`${keyType}-cert-v01@openssh.com `)).toBe(true);
    const { fields, lists } = certInfo(line);
    expect(fields.Type).toBe(`${keyType}-cert-v01@openssh.com user certificate`);
    expect(fields["Public key"]).toContain(fingerprintSha256(subject.blob));
    expect(fields["Signing CA"]).toContain(`${fingerprintSha256(cas[ca].publicKeyBlob)} (using ${SIGNATURE_NAME[ca]})`);
    expect(fields["Key ID"]).toBe('"user alice@example.com"');
    expect(fields.Serial).toBe(serial.toString());
    expect(fields.Valid).toBe("from 2030-01-02T03:04:05 to 2030-01-02T04:04:05");
    expect(lists.Principals).toEqual(["alice", "deploy"]);
    expect(fields["Critical Options"]).toBe("(none)");
    expect(lists.Extensions).toEqual(USER_EXTENSIONS);
  });

  it("a host certificate has no extensions; critical options come sorted; the comment follows", () => {
    const host = certInfo(sign("EC_prime256v1", subjects.ed25519!, { certType: "host", principals: ["db.internal"] }));
    expect(host.fields.Type).toBe("ssh-ed25519-cert-v01@openssh.com host certificate");
    expect(host.lists.Principals).toEqual(["db.internal"]);
    expect(host.fields.Extensions).toBe("(none)");
    const line = sign("ED25519", subjects.ecdsa256!, {
      criticalOptions: { "source-address": "10.0.0.0/8", "force-command": "/usr/bin/true" },
      extensions: ["permit-pty"],
      comment: "alice",
    });
    expect(line.endsWith(" alice")).toBe(true);
    const user = certInfo(line);
    expect(user.lists["Critical Options"]).toEqual(["force-command /usr/bin/true", "source-address 10.0.0.0/8"]);
    expect(user.lists.Extensions).toEqual(["permit-pty"]);
  });

  it("a changed byte breaks the signature, so -L does verify it", () => {
    const [type, b64] = sign("ED25519", subjects.ed25519!).split(" ");
    const cert = Buffer.from(b64!, "base64");
    cert[cert.length - 5]! ^= 1;
    const r = keygen(["-L", "-f", file("bad-cert.pub", `${type} ${cert.toString("base64")}\n`)]);
    expect(r.status).not.toBe(0);
  });

  it("refuses what would make a bad certificate", () => {
    const expectKeyError = (extra: Partial<SignCertificateInput>) =>
      expect(() => sign("ED25519", subjects.ed25519!, extra)).toThrow(SshKeyError);
    expectKeyError({ principals: [] });
    expectKeyError({ principals: ["alice", ""] });
    expectKeyError({ validBefore: VALID_AFTER });
    expectKeyError({ extensions: ["permit-pty", "permit-pty"] });
    expectKeyError({ subject: { type: "ssh-rsa", blob: subjects.ed25519!.blob } });
    expect(() =>
      signCertificate({
        ...{ subject: subjects.ed25519!, serial: 1n, certType: "user", keyId: "k", principals: ["a"] },
        ...{ validAfter: VALID_AFTER, validBefore: VALID_BEFORE },
        caPrivateKey: cas.ED25519.privateKey,
        caPublicBlob: cas.EC_prime256v1.publicKeyBlob,
      }),
    ).toThrow(/does not match/);
  });

  it("random serials are non-zero and below 2^63", () => {
    for (let i = 0; i < 200; i++) {
      const s = randomSerial();
      expect(s > 0n && s < 1n << 63n).toBe(true);
    }
  });
});

describe("keys", () => {
  it.each(SSH_KEY_ALGORITHMS)("%s: the private key file is read by ssh-keygen -y and signs with -s", (alg) => {
    const pair = cas[alg];
    expect(algorithmOfKeyObject(pair.privateKey)).toBe(alg);
    const pem = opensshPrivateKey(pair.privateKey, "ca@keyward");
    expect(pem.startsWith("-----BEGIN OPENSSH PRIVATE KEY-----\n")).toBe(true);
    const keyPath = file("ca-key", pem, 0o600);
    const derived = keygen(["-y", "-f", keyPath]);
    expect(derived.status, derived.out).toBe(0);
    expect(derived.out.trim()).toBe(`${pair.publicKeyLine} ca@keyward`);

    // Signing with the file proves its secret fields (d, p, q, iqmp; the Ed25519 seed) are right too.
    const subjectPath = file("subject.pub", `${publicKeyLineOf(subjects.ed25519!.blob)}\n`);
    const signed = keygen(["-q", "-s", keyPath, "-I", "by-keygen", "-n", "bob", "-z", "7", subjectPath]);
    expect(signed.status, signed.out).toBe(0);
    const info = certInfo(readFileSync(subjectPath.replace(/\.pub$/, "-cert.pub"), "utf8").trim());
    expect(info.fields["Signing CA"]).toContain(fingerprintSha256(pair.publicKeyBlob));
  });

  it("fingerprints match ssh-keygen -l", () => {
    const lines = [
      ...SSH_KEY_ALGORITHMS.map((a) => cas[a].publicKeyLine),
      publicKeyLineOf(subjects.keygenEcdsa521!.blob),
      publicKeyLineOf(subjects.skEd25519!.blob),
    ];
    for (const line of lines) {
      const r = keygen(["-l", "-f", file("fp.pub", `${line}\n`)]);
      expect(r.status, r.out).toBe(0);
      expect(r.out.split(" ")[1]).toBe(fingerprintSha256(parsePublicKeyLine(line).blob));
    }
  });

  it("parses the lines ssh-keygen writes", () => {
    for (const [type, bits, expected] of [
      ["ed25519", undefined, "ssh-ed25519"],
      ["ecdsa", 256, "ecdsa-sha2-nistp256"],
      ["ecdsa", 384, "ecdsa-sha2-nistp384"],
      ["rsa", 2048, "ssh-rsa"],
    ] as const) {
      const parsed = parsePublicKeyLine(`  ${keygenKey(type, bits).line}\n`);
      expect(parsed.type).toBe(expected);
      expect(parsed.comment).toBe(`made-by-keygen-${type}`);
      if (type === "rsa") expect(parsed.bits).toBe(2048);
    }
    expect(parsePublicKeyLine(skEd25519Line(cas.ED25519)).type).toBe("sk-ssh-ed25519@openssh.com");
  });

  it("refuses DSA, short RSA, certificates, a wrong type token, bad base64 and broken blobs", () => {
    const refused = (line: string, message: RegExp) => {
      expect(() => parsePublicKeyLine(line)).toThrow(SshKeyError);
      expect(() => parsePublicKeyLine(line)).toThrow(message);
    };
    refused(keygenKey("dsa").line, /DSA/);
    refused(keygenKey("rsa", 1024).line, /at least 2048 bits/);
    refused(sign("ED25519", subjects.ed25519!), /certificate/);
    const ed = cas.ED25519.publicKeyBlob.toString("base64");
    refused(`ssh-rsa ${ed} x`, /the line says "ssh-rsa" but the key is ssh-ed25519/);
    refused(`ecdsa-sha2-nistp256 ${ed}`, /the line says/);
    refused("garbage", /<type> <base64>/);
    refused("", /<type> <base64>/);
    refused(`ssh-ed25519 ${ed.slice(0, -4)}`, /truncated|base64|32 bytes/);
    refused(`ssh-ed25519 ${ed}!!`, /base64/);
    refused(`ssh-ed25519 ${ed}\nssh-ed25519 ${ed}`, /one public key line/);
    refused(
      `ssh-ed25519 ${Buffer.concat([cas.ED25519.publicKeyBlob, Buffer.from([0])]).toString("base64")}`,
      /trailing/,
    );
    const point = new SshReader(cas.EC_prime256v1.publicKeyBlob);
    point.string();
    point.string();
    const q = Buffer.from(point.string());
    q[q.length - 1]! ^= 1;
    const offCurve = new SshWriter().string("ecdsa-sha2-nistp256").string("nistp256").string(q).toBuffer();
    refused(publicKeyLineOf(offCurve), /not a valid public key/);
    const noApp = new SshWriter().string("sk-ssh-ed25519@openssh.com").string(Buffer.alloc(32, 9)).string("web");
    refused(publicKeyLineOf(noApp.toBuffer()), /ssh:/);
  });

  it("encodes mpints minimally", () => {
    expect(mpintBody(Buffer.from([0, 0, 0x80]))).toEqual(Buffer.from([0, 0x80]));
    expect(mpintBody(Buffer.from([0, 0x7f]))).toEqual(Buffer.from([0x7f]));
    expect(mpintBody(Buffer.from([0, 0]))).toEqual(Buffer.alloc(0));
    const r = new SshReader(
      new SshWriter()
        .mpint(0x80ffn)
        .mpint(0n)
        .uint64(1n << 63n)
        .toBuffer(),
    );
    expect(r.mpint()).toEqual(Buffer.from([0x80, 0xff]));
    expect(r.mpint()).toEqual(Buffer.alloc(0));
    expect(r.uint64()).toBe(1n << 63n);
    r.end();
  });
});

describe("KRL", () => {
  it("revokes the listed serials of the CA and nothing else", () => {
    const revoked = sign("ED25519", subjects.ed25519!, { serial: 9_000_000_000_000_000_001n });
    const kept = sign("ED25519", subjects.ed25519!, { serial: 77n });
    const krl = buildKrl({
      caPublicBlob: cas.ED25519.publicKeyBlob,
      serials: [9_000_000_000_000_000_001n, 5n, 5n],
      krlVersion: 3n,
      generatedAt: at("2030-01-02T03:04:05Z"),
      comment: "keyward ca-1",
    });
    expect(isKrl(krl)).toBe(true);
    const krlPath = file("krl", krl);
    const hit = keygen(["-Q", "-f", krlPath, file("revoked-cert.pub", `${revoked}\n`)]);
    expect(hit.out).toContain("REVOKED");
    expect(hit.status).toBe(1);
    const miss = keygen(["-Q", "-f", krlPath, file("kept-cert.pub", `${kept}\n`)]);
    expect(miss.out).toContain("ok");
    expect(miss.status).toBe(0);

    const listed = keygen(["-Q", "-l", "-f", krlPath]);
    expect(listed.status, listed.out).toBe(0);
    expect(listed.out).toContain("# KRL version 3");
    expect(listed.out).toContain("# Comment: keyward ca-1");
    expect(listed.out).toContain(`# CA key ssh-ed25519 ${fingerprintSha256(cas.ED25519.publicKeyBlob)}`);
    expect(listed.out.match(/^serial: .*$/gm)).toEqual(["serial: 5", "serial: 9000000000000000001"]);
  });

  it("an empty KRL is valid and revokes nothing", () => {
    const krl = buildKrl({
      caPublicBlob: cas.RSA_2048.publicKeyBlob,
      serials: [],
      krlVersion: 0n,
      generatedAt: new Date(),
      comment: "",
    });
    expect(isKrl(krl)).toBe(true);
    const krlPath = file("empty-krl", krl);
    expect(keygen(["-Q", "-l", "-f", krlPath]).status).toBe(0);
    const cert = file("any-cert.pub", `${sign("RSA_2048", subjects.ed25519!)}\n`);
    const r = keygen(["-Q", "-f", krlPath, cert]);
    expect(r.out).toContain("ok");
    expect(r.status).toBe(0);
  });

  it("refuses serial 0 (it would make OpenSSH reject the whole file) and tells a KRL from other bytes", () => {
    const base = { caPublicBlob: cas.ED25519.publicKeyBlob, krlVersion: 1n, generatedAt: new Date(), comment: "" };
    expect(() => buildKrl({ ...base, serials: [0n] })).toThrow(RangeError);
    const krl = buildKrl({ ...base, serials: [1n] });
    expect(isKrl(krl.subarray(0, krl.length - 1))).toBe(false);
    expect(isKrl(Buffer.from("<html>502 Bad Gateway</html>"))).toBe(false);
    expect(isKrl(Buffer.from('{"error":"NotFound"}'))).toBe(false);
    expect(isKrl(Buffer.alloc(0))).toBe(false);
  });
});
