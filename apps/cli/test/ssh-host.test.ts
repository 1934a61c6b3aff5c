import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ok } from "@keyward/client";
import { ensureDebianPackages, freePort } from "../../server/test/services/debian";
import { baseSshdConfig, HOST_NAME, LOGIN_USER, runSshd } from "../../server/test/ssh/sshd";
import { cliSession, configureSso, signInInBrowser } from "./browser";
import { admin, keyward, unique, url } from "./helpers";

const serialOf = (certFile: string) =>
  /Serial: (\d+)/.exec(execFileSync("ssh-keygen", ["-L", "-f", certFile], { encoding: "utf8" }))![1];

describe("keyward ssh add-host and connect", () => {
  const adminEnv = () => ({ KEYWARD_URL: url(), KEYWARD_TOKEN: inject("adminToken") });
  let projectId: string;
  let sshDir: string;
  let port: number;
  let sshd: Awaited<ReturnType<typeof runSshd>> | undefined;

  beforeAll(async () => {
    await configureSso();
    ({
      project: { id: projectId },
    } = await ok(admin().projects.create({ body: { projectName: unique("hosts"), type: "ssh" } })));
    ensureDebianPackages("/usr/sbin/sshd", ["openssh-server"]);
    sshDir = mkdtempSync(join(tmpdir(), "keyward-cli-sshd-"));
    execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", join(sshDir, "ssh_host_ed25519_key")]);
    port = await freePort();
    writeFileSync(join(sshDir, "sshd_config"), [...baseSshdConfig(port, join(sshDir, "sshd.pid")), ""].join("\n"));
  });
  afterAll(() => sshd?.stop());

  it("registers the host, writes the CA key, host certificate and KRL, and configures sshd", async () => {
    const base = ["ssh", "add-host", "--projectId", projectId, "--hostname", HOST_NAME, "--sshDir", sshDir];
    const half = await keyward([...base, "--configure-sshd"], { env: adminEnv() });
    expect(half.code).not.toBe(0);
    expect(half.stderr).toContain("--configure-sshd needs");
    const flags = ["--write-user-ca-to-file", "--write-host-cert-to-file", "--write-krl", "--configure-sshd"];
    const added = await keyward([...base, ...flags], { env: adminEnv() });
    expect(added.code, added.stderr).toBe(0);
    const config = readFileSync(join(sshDir, "sshd_config"), "utf8");
    for (const line of [
      `TrustedUserCAKeys ${join(sshDir, "keyward_user_ca.pub")}`,
      `HostCertificate ${join(sshDir, "ssh_host_ed25519_key-cert.pub")}`,
      `RevokedKeys ${join(sshDir, "keyward_revoked.krl")}`,
    ])
      expect(config).toContain(`\n${line}\n`);
    expect(readFileSync(join(sshDir, "keyward_revoked.krl")).subarray(0, 6).toString()).toBe("SSHKRL");
    execFileSync("/usr/sbin/sshd", ["-t", "-f", join(sshDir, "sshd_config")]);

    const again = await keyward([...base, "--write-user-ca-to-file"], { env: adminEnv() });
    expect(again.code).not.toBe(0);
    const certFile = join(sshDir, "ssh_host_ed25519_key-cert.pub");
    const before = serialOf(certFile);
    const renewed = await keyward([...base, "--renew", "--write-host-cert-to-file"], { env: adminEnv() });
    expect(renewed.code, renewed.stderr).toBe(0);
    expect(serialOf(certFile)).not.toBe(before);
    sshd = await runSshd(join(sshDir, "sshd_config"), port);
  });

  it("connects a person through a login mapping with a fresh certificate and the host CA trusted", async () => {
    expect(sshd, "the previous test starts sshd").toBeDefined();
    const email = `${unique("person")}@example.test`;
    const { jar } = await signInInBrowser(`${url()}/api/v1/sso/oidc/login?orgSlug=${inject("orgSlug")}`, {
      sub: `sub-${email}`,
      email,
    });
    const session = await cliSession(jar);
    await ok(admin().users.inviteProjectMembers({ params: { projectId }, body: { emails: [email] } }));
    const { hosts } = await ok(admin().ssh.projectHosts({ params: { projectId } }));
    await ok(
      admin().ssh.updateHost({
        params: { sshHostId: hosts[0]!.id },
        body: { loginMappings: [{ loginUser: LOGIN_USER, allowedPrincipals: { usernames: [email] } }] },
      }),
    );
    const home = mkdtempSync(join(tmpdir(), "keyward-cli-home-"));
    const env = { KEYWARD_URL: url(), KEYWARD_TOKEN: session.accessToken, HOME: home };
    const sshOptions = ["-p", String(port), "-o", "HostName=127.0.0.1", "-o", "BatchMode=yes", "-F", "/dev/null"];
    const knownHosts = [
      "-o",
      `UserKnownHostsFile=${join(home, ".ssh", "known_hosts")}`,
      "-o",
      "StrictHostKeyChecking=yes",
    ];
    const command = ["--command", "echo logged-in-as-$(id -un)"];
    const connected = await keyward(["ssh", "connect", ...command, "--", ...sshOptions, ...knownHosts], { env });
    expect(connected.code, connected.stderr).toBe(0);
    expect(connected.stdout).toContain(`logged-in-as-${LOGIN_USER}`);
    expect(readFileSync(join(home, ".ssh", "known_hosts"), "utf8")).toMatch(
      new RegExp(`^@cert-authority ${HOST_NAME.replaceAll(".", "\\.")} ssh-ed25519 AAAA\\S+\\n$`),
    );

    const kept = join(home, "keys");
    const named = await keyward(
      [
        "ssh",
        "connect",
        "--hostname",
        HOST_NAME,
        "--login-user",
        LOGIN_USER,
        "--out-file-path",
        kept,
        ...command,
        "--",
      ].concat(sshOptions, knownHosts),
      { env },
    );
    expect(named.code, named.stderr).toBe(0);
    expect(existsSync(join(kept, `keyward_${HOST_NAME}-cert.pub`))).toBe(true);
    const wrongUser = await keyward(["ssh", "connect", "--login-user", "root", "--", ...sshOptions], { env });
    expect(wrongUser.code).not.toBe(0);
    expect(wrongUser.stderr).toContain(`you may use: ${LOGIN_USER}`);
  });
});
