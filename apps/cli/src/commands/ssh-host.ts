import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "commander";
import { call, connect, type Api } from "../api";
import { writeFileAtomic } from "../agent/files";
import { CliError } from "../config";
import { configureSshd, downloadKrl } from "./ssh-files";

/** sshd's host keys, in the order a certificate is asked for the first one present. */
const HOST_KEYS = ["ssh_host_ed25519_key", "ssh_host_ecdsa_key", "ssh_host_rsa_key"];

type AddHostOptions = {
  projectId: string;
  hostname: string;
  alias?: string;
  writeUserCaToFile?: boolean;
  writeHostCertToFile?: boolean;
  writeKrl?: boolean;
  configureSshd?: boolean;
  renew?: boolean;
  force?: boolean;
  sshDir: string;
};

/** Writes a file the host did not have, or replaces it with `--force` (or when renewing). */
const place = (path: string, content: string | Buffer, replace: boolean) => {
  if (existsSync(path) && !replace) throw new CliError(`${path} exists; --force replaces it`);
  writeFileAtomic(path, content, 0o644);
  process.stdout.write(`wrote ${path}\n`);
};

const text = (body: unknown) => (typeof body === "string" ? body : String(body)).trim();

/** The host registered under this hostname in the project (for `--renew`). */
const existingHost = async (api: Api, projectId: string, hostname: string) => {
  const { hosts } = await call(api, (client) => client.ssh.projectHosts({ params: { projectId } }));
  const host = hosts.find((h) => h.hostname === hostname.toLowerCase());
  if (!host) throw new CliError(`No host ${hostname} in project ${projectId}: run add-host without --renew first`);
  return host;
};

const addHostCommand = () =>
  new Command("add-host")
    .description(
      "register this machine as an SSH host: trust the user CA, get a host certificate, keep a revocation list, configure sshd",
    )
    .requiredOption("--projectId <id>", "the SSH project")
    .requiredOption("--hostname <fqdn>", "this host's fully qualified name")
    .option("--alias <alias>", "a short name shown to people choosing a host")
    .option("--write-user-ca-to-file", "write the user CA's key to <sshDir>/keyward_user_ca.pub")
    .option("--write-host-cert-to-file", "sign the first of sshd's host keys and write <key>-cert.pub beside it")
    .option("--write-krl", "write the user CA's revocation list to <sshDir>/keyward_revoked.krl")
    .option("--configure-sshd", "set TrustedUserCAKeys, HostKey, HostCertificate (and RevokedKeys) in sshd_config")
    .option("--renew", "the host is registered already: re-sign its host key (for a timer)")
    .option("--force", "replace files and sshd_config settings that exist")
    .option("--sshDir <dir>", "sshd's directory", "/etc/ssh")
    .action(async (opts: AddHostOptions) => {
      if (opts.configureSshd && !(opts.writeUserCaToFile && opts.writeHostCertToFile))
        throw new CliError("--configure-sshd needs --write-user-ca-to-file and --write-host-cert-to-file");
      const api = await connect();
      const host = opts.renew
        ? await existingHost(api, opts.projectId, opts.hostname)
        : await call(api, (client) =>
            client.ssh.createHost({ body: { projectId: opts.projectId, hostname: opts.hostname, alias: opts.alias } }),
          );
      process.stdout.write(`${opts.renew ? "renewing" : "registered"} host ${host.hostname} (${host.id})\n`);
      const replace = Boolean(opts.force || opts.renew);
      const userCaFile = join(opts.sshDir, "keyward_user_ca.pub");
      const krlFile = join(opts.sshDir, "keyward_revoked.krl");
      if (opts.writeUserCaToFile) {
        const key = await call(api, (client) => client.ssh.hostUserCaPublicKey({ params: { sshHostId: host.id } }));
        place(userCaFile, `${text(key)}\n`, replace);
      }
      let hostKey: string | undefined;
      if (opts.writeHostCertToFile) {
        hostKey = HOST_KEYS.map((name) => join(opts.sshDir, name)).find((path) => existsSync(`${path}.pub`));
        if (!hostKey) throw new CliError(`No host key in ${opts.sshDir} (looked for ${HOST_KEYS.join(", ")})`);
        const publicKey = readFileSync(`${hostKey}.pub`, "utf8").trim();
        const signed = await call(api, (client) =>
          client.ssh.issueHostCert({ params: { sshHostId: host.id }, body: { publicKey } }),
        );
        place(`${hostKey}-cert.pub`, `${signed.signedKey}\n`, true);
      }
      if (opts.writeKrl) {
        const { krl, version } = await downloadKrl(api.url, host.userSshCaId, krlFile);
        writeFileAtomic(krlFile, krl, 0o644);
        process.stdout.write(`wrote ${krlFile} (revocation list version ${version})\n`);
      }
      if (opts.configureSshd && hostKey) {
        const configFile = join(opts.sshDir, "sshd_config");
        const directives: [string, string][] = [
          ["TrustedUserCAKeys", userCaFile],
          ["HostKey", hostKey],
          ["HostCertificate", `${hostKey}-cert.pub`],
        ];
        if (opts.writeKrl) directives.push(["RevokedKeys", krlFile]);
        const before = existsSync(configFile) ? readFileSync(configFile, "utf8") : "";
        const after = configureSshd(before, directives, Boolean(opts.force));
        if (after !== before) writeFileAtomic(configFile, after, 0o644);
        process.stdout.write(`${configFile} ${after === before ? "already set" : "updated"}; reload sshd to apply\n`);
      }
    });

type ConnectOptions = {
  hostname?: string;
  loginUser?: string;
  writeHostCaToFile: boolean;
  outFilePath?: string;
  command?: string;
};

/** One of the hosts: the one named, or the only one there is; otherwise an error listing the choices. */
const choose = <T>(items: readonly T[], wanted: string | undefined, names: (item: T) => string[], what: string) => {
  const found =
    wanted === undefined ? (items.length === 1 ? items[0] : undefined) : items.find((i) => names(i).includes(wanted));
  if (found) return found;
  const choices = items.map((i) => names(i).filter(Boolean).join(" / ")).join(", ") || "none";
  throw new CliError(
    wanted === undefined ? `Choose ${what} (one of: ${choices})` : `No ${what} ${wanted} (you may use: ${choices})`,
  );
};

/** Adds `line` to a known_hosts file unless it holds it already. */
const trustHostCa = (file: string, line: string) => {
  const current = existsSync(file) ? readFileSync(file, "utf8") : "";
  if (current.split("\n").includes(line)) return;
  writeFileAtomic(file, `${current}${current === "" || current.endsWith("\n") ? "" : "\n"}${line}\n`, 0o644);
};

const connectCommand = () =>
  new Command("connect")
    .description("log in to a host you may use: a fresh key and certificate, the host's CA trusted, then ssh")
    .option("--hostname <name>", "the host (its hostname or alias); the only one you may use by default")
    .option("--login-user <user>", "the account to log in as; the only one a mapping gives you by default")
    .option("--no-write-host-ca-to-file", "do not add the host CA's @cert-authority line to ~/.ssh/known_hosts")
    .option("--out-file-path <dir>", "keep the key and certificate in this directory (removed after ssh otherwise)")
    .option("--command <command>", "run this on the host instead of a shell")
    .argument("[sshOptions...]", "options for ssh (after --), e.g. -- -p 2222")
    .action(async (sshOptions: string[], opts: ConnectOptions) => {
      const api = await connect();
      const hosts = await call(api, (client) => client.ssh.loginHosts());
      const host = choose(hosts, opts.hostname, (h) => [h.hostname, h.alias], "a host");
      const mapping = choose(host.loginMappings, opts.loginUser, (m) => [m.loginUser], "a login user");
      const issued = await call(api, (client) =>
        client.ssh.issueUserCert({ params: { sshHostId: host.id }, body: { loginUser: mapping.loginUser } }),
      );
      if (opts.writeHostCaToFile) {
        const key = await call(api, (client) => client.ssh.hostHostCaPublicKey({ params: { sshHostId: host.id } }));
        trustHostCa(join(homedir(), ".ssh", "known_hosts"), `@cert-authority ${host.hostname} ${text(key)}`);
      }
      const dir = opts.outFilePath ?? mkdtempSync(join(tmpdir(), "keyward-ssh-"));
      const keyFile = join(dir, `keyward_${host.hostname}`);
      try {
        writeFileAtomic(keyFile, issued.privateKey, 0o600);
        writeFileAtomic(`${keyFile}.pub`, `${issued.publicKey}\n`, 0o644);
        writeFileAtomic(`${keyFile}-cert.pub`, `${issued.signedKey}\n`, 0o644);
        // ssh keeps the first value of an option: the caller's come first. The host's key is checked under
        // its registered name, which the @cert-authority line and the host certificate carry.
        const args = [
          ...sshOptions,
          ...["-i", keyFile, "-o", `CertificateFile=${keyFile}-cert.pub`, "-o", "IdentitiesOnly=yes"],
          ...["-o", `HostKeyAlias=${host.hostname}`],
        ];
        const destination = `${mapping.loginUser}@${host.hostname}`;
        const ssh = spawnSync("ssh", [...args, destination, ...(opts.command ? [opts.command] : [])], {
          stdio: "inherit",
        });
        if (ssh.error) throw new CliError(`Could not run ssh: ${ssh.error.message}`);
        process.exitCode = ssh.status ?? 1;
      } finally {
        if (!opts.outFilePath) rmSync(dir, { recursive: true, force: true });
      }
    });

export const sshHostCommands = () => [addHostCommand(), connectCommand()];
