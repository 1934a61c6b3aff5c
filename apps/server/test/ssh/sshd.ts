import { execFileSync, spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureDebianPackages, freePort, waitFor } from "../services/debian";

/** The throwaway account certificates log in as. */
export const LOGIN_USER = "kwdeploy";
export const HOST_NAME = "ssh.example.test";

/** An account sshd lets in with a certificate: it exists, has a shell and no locked password. */
const ensureLoginUser = () => {
  if (spawnSync("id", [LOGIN_USER]).status !== 0) execFileSync("useradd", ["-m", "-s", "/bin/sh", LOGIN_USER]);
  execFileSync("usermod", ["-p", "*", LOGIN_USER]);
};

/**
 * Debian's sshd on a free loopback port with its own configuration: it trusts the given user CA keys,
 * reads its revocation list from `krlPath` at every login and presents a host certificate. Its log
 * (stderr) is kept for the tests to read.
 */
export const startSshd = async (options: { hostKey: string; trustedUserCaKeys: string; krl: Buffer }) => {
  const dir = mkdtempSync(join(tmpdir(), "keyward-sshd-"));
  const port = await freePort();
  const paths = {
    trusted: join(dir, "user_ca.pub"),
    krl: join(dir, "revoked.krl"),
    config: join(dir, "sshd_config"),
  };
  writeFileSync(paths.trusted, options.trustedUserCaKeys);
  writeFileSync(paths.krl, options.krl);
  writeFileSync(
    paths.config,
    [
      ...baseSshdConfig(port, join(dir, "sshd.pid")),
      `HostKey ${options.hostKey}`,
      `HostCertificate ${options.hostKey}-cert.pub`,
      `TrustedUserCAKeys ${paths.trusted}`,
      `RevokedKeys ${paths.krl}`,
      "",
    ].join("\n"),
  );
  const sshd = await runSshd(paths.config, port);
  return {
    ...sshd,
    /** Replace the revocation list as `keyward ssh krl` does: sshd reads it at the next login. */
    setKrl: (krl: Buffer) => writeFileSync(paths.krl, krl),
  };
};

/**
 * Debian's sshd in the foreground on a configuration file that sets `port` on 127.0.0.1 (and a
 * PidFile of its own), its log (stderr) kept for the tests to read.
 */
export const runSshd = async (config: string, port: number) => {
  ensureDebianPackages("/usr/sbin/sshd", ["openssh-server"]);
  ensureLoginUser();
  mkdirSync("/run/sshd", { recursive: true, mode: 0o755 });
  const log: string[] = [];
  const child = spawn("/usr/sbin/sshd", ["-D", "-e", "-f", config], { stdio: ["ignore", "ignore", "pipe"] });
  child.stderr.on("data", (chunk: Buffer) => log.push(chunk.toString()));
  await waitFor(
    "sshd",
    () =>
      new Promise<boolean>((resolve) => {
        const socket = connect(port, "127.0.0.1", () => {
          socket.destroy();
          resolve(true);
        });
        socket.on("error", () => resolve(false));
      }),
  );
  return {
    port,
    log: () => log.join(""),
    /** Waits until sshd's log (written by its connection processes a moment later) shows `pattern`. */
    logShows: async (pattern: RegExp) => {
      await waitFor(`sshd log ${pattern}`, () => pattern.test(log.join("")), 10_000).catch(() => undefined);
      return pattern.test(log.join(""));
    },
    stop: () => {
      child.kill("SIGTERM");
    },
  };
};

/** The settings every test sshd has besides its keys: loopback, certificates only, no PAM. */
export const baseSshdConfig = (port: number, pidFile: string) => [
  `Port ${port}`,
  "ListenAddress 127.0.0.1",
  `PidFile ${pidFile}`,
  "AuthorizedKeysFile none",
  "PasswordAuthentication no",
  "KbdInteractiveAuthentication no",
  "PubkeyAuthentication yes",
  "UsePAM no",
  "StrictModes no",
  "LogLevel VERBOSE",
  "PrintMotd no",
];

export type Sshd = Awaited<ReturnType<typeof startSshd>>;

/**
 * `ssh` as a client runs it: the key (and `<key>-cert.pub` beside it), host keys checked strictly
 * against `knownHosts`, the host named by its certificate's principal; runs `echo` and answers
 * { status, stdout, stderr }.
 */
export const sshLogin = (sshd: Sshd, keyPath: string, knownHosts: string, user = LOGIN_USER) => {
  const dir = mkdtempSync(join(tmpdir(), "keyward-ssh-client-"));
  const knownHostsFile = join(dir, "known_hosts");
  writeFileSync(knownHostsFile, knownHosts);
  const result = spawnSync(
    "ssh",
    [
      "-p",
      String(sshd.port),
      "-i",
      keyPath,
      "-o",
      "IdentitiesOnly=yes",
      "-o",
      `UserKnownHostsFile=${knownHostsFile}`,
      "-o",
      "GlobalKnownHostsFile=/dev/null",
      "-o",
      "StrictHostKeyChecking=yes",
      "-o",
      `HostKeyAlias=${HOST_NAME}`,
      "-o",
      "BatchMode=yes",
      "-o",
      "ConnectTimeout=10",
      "-F",
      "/dev/null",
      `${user}@127.0.0.1`,
      "echo logged-in-as-$(id -un)",
    ],
    { encoding: "utf8", timeout: 30_000 },
  );
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
};

export const readText = (path: string) => readFileSync(path, "utf8");
