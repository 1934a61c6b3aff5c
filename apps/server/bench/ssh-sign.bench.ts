import { performance } from "node:perf_hooks";
import { generateSshKeyPair, parsePublicKeyLine, randomSerial, signCertificate } from "../src/modules/ssh/wire";
import type { SshKeyAlgorithm } from "../src/modules/ssh/wire";

/**
 * Certificates signed per second by one core, per CA algorithm (the encoder and node:crypto alone,
 * no HTTP, no database): what a signing route can spend at most on the signature itself.
 */
const ALGORITHMS: SshKeyAlgorithm[] = ["ED25519", "EC_prime256v1", "EC_secp384r1", "RSA_2048", "RSA_4096"];
const SECONDS = Number(process.env.BENCH_DURATION ?? 2);

const subject = parsePublicKeyLine(generateSshKeyPair("ED25519").publicKeyLine);
console.log(`SSH certificates signed per second (one core, ${SECONDS} s each, an Ed25519 subject key)`);
for (const algorithm of ALGORITHMS) {
  const ca = generateSshKeyPair(algorithm);
  const sign = () =>
    signCertificate({
      caPrivateKey: ca.privateKey,
      caPublicBlob: ca.publicKeyBlob,
      subject,
      serial: randomSerial(),
      certType: "user",
      keyId: "bench",
      principals: ["deploy"],
      validAfter: new Date(Date.now() - 60_000),
      validBefore: new Date(Date.now() + 3_600_000),
    });
  for (let i = 0; i < 20; i += 1) sign();
  let count = 0;
  const start = performance.now();
  while (performance.now() - start < SECONDS * 1000) {
    sign();
    count += 1;
  }
  const perSecond = count / ((performance.now() - start) / 1000);
  console.log(`  ${algorithm.padEnd(14)} ${perSecond.toFixed(0).padStart(7)} /s`);
}
