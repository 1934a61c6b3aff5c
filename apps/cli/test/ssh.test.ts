import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ok } from "@keyward/client";
import { inject } from "vitest";
import { admin, keyward, unique, url } from "./helpers";

/** An SSH project with an ED25519 CA and a template for user `deploy`; the admin's token in the env. */
const sshScope = async () => {
  const client = admin();
  const { project } = await ok(client.projects.create({ body: { projectName: unique("ssh"), type: "ssh" } }));
  const { ca } = await ok(
    client.ssh.createCa({ body: { projectId: project.id, friendlyName: "users", keyAlgorithm: "ED25519" } }),
  );
  const template = await ok(
    client.ssh.createTemplate({
      body: {
        sshCaId: ca.id,
        name: "ops",
        ttl: "1h",
        maxTTL: "1d",
        allowedUsers: ["deploy"],
        allowedHosts: [],
        allowUserCertificates: true,
        allowHostCertificates: false,
        allowCustomKeyIds: false,
      },
    }),
  );
  return { ca, template, env: { KEYWARD_URL: url(), KEYWARD_TOKEN: inject("adminToken") } };
};

describe("keyward ssh", () => {
  it("signs a .pub file, issues a key pair, revokes, and refreshes a KRL only with a valid one", async () => {
    const { ca, template, env } = await sshScope();
    const dir = mkdtempSync(join(tmpdir(), "keyward-cli-ssh-"));
    const key = join(dir, "id_ed25519");
    execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", key]);
    const signArgs = ["--certificateTemplateId", template.id, "--principals", "deploy"];
    const sign = await keyward(["ssh", "sign-key", ...signArgs, "--publicKeyFilePath", `${key}.pub`], { env });
    expect(sign.code, sign.stderr).toBe(0);
    expect(execFileSync("ssh-keygen", ["-L", "-f", `${key}-cert.pub`], { encoding: "utf8" })).toContain("deploy");
    const serial = /serial (\d+)/.exec(sign.stdout)![1]!;

    const issued = await keyward(
      ["ssh", "issue", ...signArgs, "--keyAlgorithm", "EC_prime256v1", "--outFilePath", dir],
      {
        env,
      },
    );
    expect(issued.code, issued.stderr).toBe(0);
    expect(statSync(join(dir, "id_ecdsa_p256")).mode & 0o777).toBe(0o600);
    expect(existsSync(join(dir, "id_ecdsa_p256-cert.pub"))).toBe(true);

    const krl = join(dir, "revoked.krl");
    const first = await keyward(["ssh", "krl", "--ca", ca.id, "--out", krl], { env });
    expect(first.code, first.stderr).toBe(0);
    expect(readFileSync(krl).subarray(0, 6).toString()).toBe("SSHKRL");
    const { certificates } = await ok(
      admin().ssh.projectCertificates({ params: { projectId: ca.projectId }, query: {} }),
    );
    const record = certificates.find((c) => c.serialNumber === serial)!;
    const revoke = await keyward(["ssh", "revoke", record.id, "--reason", "lost"], { env });
    expect(revoke.stdout).toBe(`revoked serial ${serial}\n`);
    expect((await keyward(["ssh", "krl", "--ca", ca.id, "--out", krl], { env })).code).toBe(0);
    const query = execFileSync("ssh-keygen", ["-Q", "-l", "-f", krl], { encoding: "utf8" });
    expect(query).toContain(serial);

    const before = readFileSync(krl);
    const wrong = await keyward(["ssh", "krl", "--ca", "6f1c1d2e-8a4b-4c3d-9e2f-1a2b3c4d5e6f", "--out", krl], { env });
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toContain("left as it was");
    expect(readFileSync(krl).equals(before)).toBe(true);
    const down = await keyward(["ssh", "krl", "--ca", ca.id, "--out", krl], {
      env: { ...env, KEYWARD_URL: "http://127.0.0.1:9" },
    });
    expect(down.code).not.toBe(0);
    expect(readFileSync(krl).equals(before)).toBe(true);
  });
});
