import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createProject, expectOk, type Tenant } from "../helpers/tenant";

/** An SSH project with an ED25519 CA and a template allowing the given users and hosts. */
export const sshWorld = async (
  tenant: Tenant,
  options: {
    keyAlgorithm?: "ED25519" | "EC_prime256v1" | "EC_secp384r1" | "RSA_2048" | "RSA_4096";
    users?: string[];
  } = {},
) => {
  const project = await createProject(tenant, "ssh");
  const { ca } = expectOk(
    await tenant.admin.ssh.createCa({
      body: { projectId: project.id, friendlyName: "users", keyAlgorithm: options.keyAlgorithm ?? "ED25519" },
    }),
  );
  const template = expectOk(
    await tenant.admin.ssh.createTemplate({
      body: {
        sshCaId: ca.id,
        name: "ops",
        ttl: "1h",
        maxTTL: "1d",
        allowedUsers: options.users ?? ["deploy", "alice"],
        allowedHosts: ["*.example.test"],
        allowUserCertificates: true,
        allowHostCertificates: true,
        allowCustomKeyIds: true,
      },
    }),
  );
  return { project, ca, template };
};

/** A key pair made by ssh-keygen in a fresh directory: the private key's path and the public line. */
export const sshKeygen = (type: "ed25519" | "ecdsa" | "rsa" = "ed25519") => {
  const dir = mkdtempSync(join(tmpdir(), "keyward-ssh-key-"));
  const path = join(dir, "id");
  execFileSync("ssh-keygen", ["-q", "-t", type, "-N", "", "-C", "test", "-f", path]);
  return { dir, path, publicKey: readFileSync(`${path}.pub`, "utf8").trim() };
};
