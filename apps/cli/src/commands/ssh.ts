import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Command, Option } from "commander";
import { writeFileAtomic } from "../agent/files";
import { call, connect } from "../api";
import { CliError, resolveConnection } from "../config";
import { downloadKrl } from "./ssh-files";
import { sshHostCommands } from "./ssh-host";

const ALGORITHMS = ["ED25519", "EC_prime256v1", "EC_secp384r1", "RSA_2048", "RSA_4096"] as const;
const FILE_NAMES: Record<(typeof ALGORITHMS)[number], string> = {
  ED25519: "id_ed25519",
  EC_prime256v1: "id_ecdsa_p256",
  EC_secp384r1: "id_ecdsa_p384",
  RSA_2048: "id_rsa_2048",
  RSA_4096: "id_rsa_4096",
};

type SignOptions = {
  certificateTemplateId: string;
  principals: string;
  certType: "user" | "host";
  ttl?: string;
  keyId?: string;
};

/** The options `sign` and `issue` share, spelled as Infisical's CLI spells them. */
const signing = (command: Command) =>
  command
    .requiredOption("--certificateTemplateId <id>", "the certificate template to sign with")
    .requiredOption("--principals <list>", "comma-separated principals (user names or host names)")
    .addOption(new Option("--certType <type>", "user or host certificate").choices(["user", "host"]).default("user"))
    .option("--ttl <ttl>", "validity, e.g. 1h (the template's ttl by default)")
    .option("--keyId <id>", "key id (when the template allows custom ones)");

const bodyOf = (opts: SignOptions) => ({
  certificateTemplateId: opts.certificateTemplateId,
  principals: opts.principals
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p.length > 0),
  certType: opts.certType,
  ttl: opts.ttl,
  keyId: opts.keyId,
});

const signCommand = () =>
  signing(new Command("sign").alias("sign-key").description("sign an SSH public key with a certificate template"))
    .option("--publicKey <line>", "the public key line")
    .option("--publicKeyFilePath <path>", "a .pub file holding the public key")
    .option("--outFilePath <path>", "where to write the certificate (default: <key>-cert.pub beside the .pub file)")
    .action(async (opts: SignOptions & { publicKey?: string; publicKeyFilePath?: string; outFilePath?: string }) => {
      if (!opts.publicKey && !opts.publicKeyFilePath) throw new CliError("Give --publicKey or --publicKeyFilePath");
      if (opts.publicKeyFilePath && !opts.publicKeyFilePath.endsWith(".pub"))
        throw new CliError("--publicKeyFilePath must name a .pub file");
      const publicKey = opts.publicKey ?? readFileSync(opts.publicKeyFilePath!, "utf8").trim();
      const out =
        opts.outFilePath ??
        (opts.publicKeyFilePath ? opts.publicKeyFilePath.replace(/\.pub$/, "-cert.pub") : undefined);
      if (out && !out.endsWith("-cert.pub")) throw new CliError("--outFilePath must end in -cert.pub");
      const signed = await call(await connect(), (client) => client.ssh.sign({ body: { ...bodyOf(opts), publicKey } }));
      if (!out) {
        process.stdout.write(`${signed.signedKey}\n`);
        return;
      }
      writeFileAtomic(out, `${signed.signedKey}\n`, 0o644);
      process.stdout.write(`serial ${signed.serialNumber} written to ${out}\n`);
    });

const issueCommand = () =>
  signing(
    new Command("issue")
      .alias("issue-credentials")
      .description("have a key pair generated and signed; writes the key, its .pub and -cert.pub"),
  )
    .addOption(new Option("--keyAlgorithm <algorithm>", "key algorithm").choices(ALGORITHMS).default("ED25519"))
    .requiredOption("--outFilePath <dir>", "directory to write the key files to")
    .action(async (opts: SignOptions & { keyAlgorithm: (typeof ALGORITHMS)[number]; outFilePath: string }) => {
      const issued = await call(await connect(), (client) =>
        client.ssh.issue({ body: { ...bodyOf(opts), keyAlgorithm: opts.keyAlgorithm } }),
      );
      const key = join(opts.outFilePath, FILE_NAMES[opts.keyAlgorithm]);
      writeFileAtomic(key, issued.privateKey, 0o600);
      writeFileAtomic(`${key}.pub`, `${issued.publicKey}\n`, 0o644);
      writeFileAtomic(`${key}-cert.pub`, `${issued.signedKey}\n`, 0o644);
      process.stdout.write(`serial ${issued.serialNumber}: ${key}, ${key}.pub and ${key}-cert.pub\n`);
    });

/**
 * Refreshes a host's revocation list. sshd refuses every key when its RevokedKeys file is missing or
 * not a KRL, so the new list replaces the old one only once it is whole and starts with the KRL magic;
 * on any failure the old file stays and the command exits non-zero.
 */
const krlCommand = () =>
  new Command("krl")
    .description("download a CA's key revocation list for sshd's RevokedKeys, replacing the file only when it is valid")
    .requiredOption("--ca <id>", "the SSH CA's id")
    .requiredOption("--out <path>", "the RevokedKeys file")
    .action(async (opts: { ca: string; out: string }) => {
      const { krl, version } = await downloadKrl(resolveConnection(false).url, opts.ca, opts.out);
      writeFileAtomic(opts.out, krl, 0o644);
      process.stdout.write(`revocation list version ${version} written to ${opts.out}\n`);
    });

const revokeCommand = () =>
  new Command("revoke")
    .description("revoke a signed certificate: its serial joins the CA's revocation list")
    .argument("<certificateId>", "the certificate's id (keyward ssh certificates lists them)")
    .option("--reason <text>", "why")
    .action(async (certificateId: string, opts: { reason?: string }) => {
      const done = await call(await connect(), (client) =>
        client.ssh.revoke({ params: { certificateId }, body: { reason: opts.reason } }),
      );
      process.stdout.write(`revoked serial ${done.serialNumber}\n`);
    });

export const sshCommand = () => {
  const root = new Command("ssh").description(
    "SSH certificates: sign, issue, revoke, keep revocation lists current, register hosts and connect to them",
  );
  for (const command of [signCommand(), issueCommand(), krlCommand(), revokeCommand(), ...sshHostCommands()])
    root.addCommand(command);
  return root;
};
