import { execFileSync, spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { insertCustomRole } from "../helpers/structure";
import { createIdentity, createTenant, expectOk, type Tenant } from "../helpers/tenant";
import { sshKeygen, sshWorld } from "./helpers";
import { HOST_NAME, LOGIN_USER, sshLogin, startSshd, type Sshd } from "./sshd";

const fetchText = async (tenant: Tenant, path: string) => {
  const res = await fetch(new URL(path, tenant.app.baseUrl));
  return { status: res.status, type: res.headers.get("content-type"), body: Buffer.from(await res.arrayBuffer()) };
};

/** A key pair whose certificate (written beside it, where ssh looks) came from `sign`. */
const signedKey = async (tenant: Tenant, templateId: string, principals = [LOGIN_USER], ttl?: string) => {
  const key = sshKeygen();
  const signed = expectOk(
    await tenant.admin.ssh.sign({
      body: { certificateTemplateId: templateId, publicKey: key.publicKey, certType: "user", principals, ttl },
    }),
  );
  writeFileSync(`${key.path}-cert.pub`, `${signed.signedKey}\n`);
  return { ...key, ...signed };
};

describe("SSH certificates against a real sshd", () => {
  let tenant: Tenant;
  let world: Awaited<ReturnType<typeof sshWorld>>;
  let rsaTemplateId: string;
  let sshd: Sshd;
  let knownHosts: string;

  beforeAll(async () => {
    tenant = await createTenant();
    world = await sshWorld(tenant, { users: [LOGIN_USER, "alice"] });
    const { ca: rsaCa } = expectOk(
      await tenant.admin.ssh.createCa({
        body: { projectId: world.project.id, friendlyName: "rsa", keyAlgorithm: "RSA_2048" },
      }),
    );
    rsaTemplateId = expectOk(
      await tenant.admin.ssh.createTemplate({
        body: {
          sshCaId: rsaCa.id,
          name: "rsa",
          allowedUsers: ["*"],
          allowedHosts: [],
          allowUserCertificates: true,
          allowHostCertificates: false,
          allowCustomKeyIds: false,
        },
      }),
    ).id;
    const host = expectOk(
      await tenant.admin.ssh.createHost({ body: { projectId: world.project.id, hostname: HOST_NAME } }),
    );
    const hostKey = sshKeygen();
    const hostCert = expectOk(
      await tenant.admin.ssh.issueHostCert({ params: { sshHostId: host.id }, body: { publicKey: hostKey.publicKey } }),
    );
    writeFileSync(`${hostKey.path}-cert.pub`, `${hostCert.signedKey}\n`);
    const userCas = [world.ca.id, rsaCa.id].map((id) => fetchText(tenant, `/api/v1/ssh/ca/${id}/public-key`));
    const trusted = (await Promise.all(userCas)).map((r) => r.body.toString()).join("");
    const krl = await fetchText(tenant, `/api/v1/ssh/ca/${world.ca.id}/krl`);
    sshd = await startSshd({ hostKey: hostKey.path, trustedUserCaKeys: trusted, krl: krl.body });
    const hostCa = (await fetchText(tenant, `/api/v1/ssh/hosts/${host.id}/host-ca-public-key`)).body.toString();
    knownHosts = `@cert-authority ${HOST_NAME} ${hostCa}`;
  }, 120_000);
  afterAll(() => sshd?.stop());

  it("serves CA keys bare and unauthenticated, and a valid empty KRL", async () => {
    const line = await fetchText(tenant, `/api/v1/ssh/ca/${world.ca.id}/public-key`);
    expect(line.status).toBe(200);
    expect(line.type).toContain("text/plain");
    expect(line.body.toString()).toMatch(/^ssh-ed25519 AAAA\S+\n$/);
    const krl = await fetchText(tenant, `/api/v1/ssh/ca/${world.ca.id}/krl`);
    expect(krl.body.subarray(0, 8).toString("latin1")).toBe("SSHKRL\n\0");
    expect((await fetchText(tenant, "/api/v1/ssh/ca/6f1c1d2e-8a4b-4c3d-9e2f-1a2b3c4d5e6f/krl")).status).toBe(404);
  });

  it("logs in with a signed certificate, an issued key pair and an RSA CA's certificate", async () => {
    const signed = await signedKey(tenant, world.template.id);
    expect(sshLogin(sshd, signed.path, knownHosts).stdout).toContain(`logged-in-as-${LOGIN_USER}`);
    const described = execFileSync("ssh-keygen", ["-L", "-f", `${signed.path}-cert.pub`], { encoding: "utf8" });
    expect(described).toContain(`Serial: ${signed.serialNumber}`);
    const issued = expectOk(
      await tenant.admin.ssh.issue({
        body: {
          certificateTemplateId: world.template.id,
          keyAlgorithm: "EC_prime256v1",
          certType: "user",
          principals: [LOGIN_USER],
        },
      }),
    );
    const dir = sshKeygen().dir;
    writeFileSync(join(dir, "issued"), issued.privateKey, { mode: 0o600 });
    writeFileSync(join(dir, "issued-cert.pub"), `${issued.signedKey}\n`);
    expect(sshLogin(sshd, join(dir, "issued"), knownHosts).stdout).toContain("logged-in-as");
    const rsa = await signedKey(tenant, rsaTemplateId);
    expect(sshLogin(sshd, rsa.path, knownHosts).stdout).toContain("logged-in-as");
    expect(execFileSync("ssh-keygen", ["-L", "-f", `${rsa.path}-cert.pub`], { encoding: "utf8" })).toContain(
      "rsa-sha2-512",
    );
  });

  it("checks the host through @cert-authority and refuses another CA's line", async () => {
    const signed = await signedKey(tenant, world.template.id);
    const other = expectOk(
      await tenant.admin.ssh.createCa({
        body: { projectId: world.project.id, friendlyName: "other", keyAlgorithm: "ED25519" },
      }),
    ).ca;
    const refused = sshLogin(sshd, signed.path, `@cert-authority ${HOST_NAME} ${other.publicKey}\n`);
    expect(refused.status).toBe(255);
    expect(refused.stderr).toContain("Host key verification failed");
  });

  it("refuses principals, TTLs and types the template does not allow", async () => {
    const { publicKey } = sshKeygen();
    const base = { certificateTemplateId: world.template.id, publicKey, certType: "user" as const };
    const outside = await tenant.admin.ssh.sign({ body: { ...base, principals: ["root"] } });
    expect(outside).toMatchObject({
      status: 400,
      body: { message: "Principal 'root' is not in the list of allowed users." },
    });
    const long = await tenant.admin.ssh.sign({ body: { ...base, principals: [LOGIN_USER], ttl: "2d" } });
    expect(long.body).toMatchObject({ message: expect.stringContaining("greater than configured max TTL") });
    const host = await tenant.admin.ssh.sign({ body: { ...base, certType: "host", principals: ["x.other.test"] } });
    expect(host.body).toMatchObject({
      message: "Principal 'x.other.test' is not in the list of allowed hosts or domains.",
    });
    const bad = await tenant.admin.ssh.sign({ body: { ...base, publicKey: "ssh-dss AAAA", principals: [LOGIN_USER] } });
    expect(bad.status).toBe(400);
  });

  it("an expired certificate is refused by sshd", async () => {
    const clock = tenant.app.deps.clock;
    const realNow = clock.now.bind(clock);
    const spy = vi.spyOn(clock, "now").mockImplementation(() => realNow() - 7_200_000);
    const expired = await signedKey(tenant, world.template.id).finally(() => spy.mockRestore());
    const res = sshLogin(sshd, expired.path, knownHosts);
    expect(res.status).toBe(255);
    expect(await sshd.logShows(/Certificate invalid: expired/)).toBe(true);
  });

  it("after a revocation and a KRL refresh sshd refuses the certificate, and others keep working", async () => {
    const revoked = await signedKey(tenant, world.template.id);
    const kept = await signedKey(tenant, world.template.id);
    const { certificates } = expectOk(
      await tenant.admin.ssh.projectCertificates({ params: { projectId: world.project.id }, query: { limit: 100 } }),
    );
    const record = certificates.find((c) => c.serialNumber === revoked.serialNumber)!;
    expect(record).toMatchObject({ status: "active", principals: [LOGIN_USER], revokedAt: null });
    const done = expectOk(
      await tenant.admin.ssh.revoke({ params: { certificateId: record.id }, body: { reason: "laptop lost" } }),
    );
    expect(done.serialNumber).toBe(revoked.serialNumber);
    const again = await tenant.admin.ssh.revoke({ params: { certificateId: record.id }, body: {} });
    expect(again).toMatchObject({ status: 400, body: { message: "The certificate is already revoked" } });
    const listed = expectOk(
      await tenant.admin.ssh.projectCertificates({ params: { projectId: world.project.id }, query: { limit: 100 } }),
    );
    expect(listed.certificates.find((c) => c.id === record.id)).toMatchObject({ status: "revoked" });
    const krl = await fetchText(tenant, `/api/v1/ssh/ca/${world.ca.id}/krl`);
    const krlFile = join(revoked.dir, "krl");
    writeFileSync(krlFile, krl.body);
    const check = spawnSync("ssh-keygen", ["-Q", "-f", krlFile, `${revoked.path}-cert.pub`], { encoding: "utf8" });
    expect(check.status).toBe(1);
    sshd.setKrl(krl.body);
    expect(sshLogin(sshd, revoked.path, knownHosts).status).toBe(255);
    expect(await sshd.logShows(/revoked by file/)).toBe(true);
    expect(sshLogin(sshd, kept.path, knownHosts).stdout).toContain("logged-in-as");
  });
});

describe("SSH rights and tenancy", () => {
  it("403 without rights, 404 across organizations, and no CA private key in any answer", async () => {
    const tenant = await createTenant();
    const world = await sshWorld(tenant);
    const role = await insertCustomRole(tenant, world.project.id, [
      { subject: "ssh-hosts", action: ["read"], inverted: false },
    ]);
    const member = await createIdentity(tenant, { projectId: world.project.id, projectRole: role });
    const { publicKey } = sshKeygen();
    const body = {
      certificateTemplateId: world.template.id,
      publicKey,
      certType: "user" as const,
      principals: ["deploy"],
    };
    expect((await member.client.ssh.sign({ body })).status).toBe(403);
    const { publicKey: _pk, ...issueBody } = body;
    expect((await member.client.ssh.issue({ body: { ...issueBody, keyAlgorithm: "ED25519" } })).status).toBe(403);
    const signed = expectOk(await tenant.admin.ssh.sign({ body }));
    expect((await member.client.ssh.revoke({ params: { certificateId: signed.certificateId }, body: {} })).status).toBe(
      403,
    );
    expect((await member.client.ssh.getCa({ params: { sshCaId: world.ca.id } })).status).toBe(403);
    const templateBody = {
      sshCaId: world.ca.id,
      name: "member",
      allowedUsers: ["*"],
      allowedHosts: [],
      allowUserCertificates: true,
      allowHostCertificates: false,
      allowCustomKeyIds: true,
    };
    expect((await member.client.ssh.createTemplate({ body: templateBody })).status).toBe(403);
    const templateId = { certificateTemplateId: world.template.id };
    expect((await member.client.ssh.updateTemplate({ params: templateId, body: { ttl: "2h" } })).status).toBe(403);
    expect(
      (
        await member.client.ssh.createCa({
          body: { projectId: world.project.id, friendlyName: "m", keyAlgorithm: "ED25519" },
        })
      ).status,
    ).toBe(403);
    const hostBody = { projectId: world.project.id, hostname: "m.example.test" };
    expect((await member.client.ssh.createHost({ body: hostBody })).status).toBe(403);
    expect((await member.client.ssh.projectHosts({ params: { projectId: world.project.id } })).status).toBe(200);
    const nothing = await createIdentity(tenant, {
      projectId: world.project.id,
      projectRole: await insertCustomRole(tenant, world.project.id, [
        { subject: "secrets", action: ["read"], inverted: false },
      ]),
    });
    expect((await nothing.client.ssh.projectHosts({ params: { projectId: world.project.id } })).status).toBe(403);
    expect(
      (await nothing.client.ssh.projectCertificates({ params: { projectId: world.project.id }, query: {} })).status,
    ).toBe(403);

    const other = (await createTenant()).admin.ssh;
    expect((await other.getCa({ params: { sshCaId: world.ca.id } })).status).toBe(404);
    expect((await other.getTemplate({ params: { certificateTemplateId: world.template.id } })).status).toBe(404);
    expect((await other.sign({ body })).status).toBe(404);
    expect((await other.revoke({ params: { certificateId: signed.certificateId }, body: {} })).status).toBe(404);
    expect((await other.projectCas({ params: { projectId: world.project.id } })).status).toBe(404);
    const viaOwnCa = await other.createTemplate({
      body: {
        sshCaId: world.ca.id,
        name: "steal",
        allowedUsers: ["*"],
        allowedHosts: [],
        allowUserCertificates: true,
        allowHostCertificates: false,
        allowCustomKeyIds: true,
      },
    });
    expect(viaOwnCa.status).toBe(404);

    const answers = JSON.stringify([
      await tenant.admin.ssh.getCa({ params: { sshCaId: world.ca.id } }),
      await tenant.admin.ssh.projectCas({ params: { projectId: world.project.id } }),
      await tenant.admin.ssh.updateCa({ params: { sshCaId: world.ca.id }, body: { friendlyName: "renamed" } }),
    ]);
    expect(answers).not.toContain("PRIVATE KEY");
    const stored = await tenant.app.deps.db.selectFrom("ssh_cas").select("encrypted_private_key").execute();
    expect(stored.every((r) => !r.encrypted_private_key.includes("PRIVATE KEY"))).toBe(true);
  });

  it("manages templates and hosts, and refuses a secret-manager project", async () => {
    const tenant = await createTenant();
    const world = await sshWorld(tenant);
    const updated = expectOk(
      await tenant.admin.ssh.updateTemplate({
        params: { certificateTemplateId: world.template.id },
        body: { ttl: "2h", status: "disabled" },
      }),
    );
    expect(updated).toMatchObject({ ttl: "2h", status: "disabled", maxTTL: "1d" });
    const tooLong = await tenant.admin.ssh.updateTemplate({
      params: { certificateTemplateId: world.template.id },
      body: { ttl: "3d" },
    });
    expect(tooLong).toMatchObject({ status: 400, body: { message: "TTL cannot be greater than max TTL" } });
    const { publicKey } = sshKeygen();
    const disabled = await tenant.admin.ssh.sign({
      body: { certificateTemplateId: world.template.id, publicKey, certType: "user", principals: ["deploy"] },
    });
    expect(disabled).toMatchObject({ status: 400, body: { message: "SSH certificate template is disabled" } });
    const host = expectOk(
      await tenant.admin.ssh.createHost({
        body: {
          projectId: world.project.id,
          hostname: "db.example.test",
          loginMappings: [{ loginUser: "ops", allowedPrincipals: { usernames: ["alice"] } }],
        },
      }),
    );
    expect(host).toMatchObject({ userCertTtl: "1h", hostCertTtl: "30d" });
    expect(host.loginMappings).toEqual([
      { loginUser: "ops", allowedPrincipals: { usernames: ["alice"], groups: [] }, source: "host" },
    ]);
    const second = expectOk(
      await tenant.admin.ssh.createHost({ body: { projectId: world.project.id, hostname: "web.example.test" } }),
    );
    expect(second.userSshCaId).toBe(host.userSshCaId);
    const duplicate = await tenant.admin.ssh.createHost({
      body: { projectId: world.project.id, hostname: "db.example.test" },
    });
    expect(duplicate.status).toBe(400);
    const hosts = expectOk(await tenant.admin.ssh.projectHosts({ params: { projectId: world.project.id } })).hosts;
    expect(hosts.map((h) => h.hostname)).toEqual(["db.example.test", "web.example.test"]);
    expectOk(await tenant.admin.ssh.deleteHost({ params: { sshHostId: second.id }, body: {} }));
    expect((await tenant.admin.ssh.getHost({ params: { sshHostId: second.id } })).status).toBe(404);
    const secrets = expectOk(
      await tenant.admin.projects.create({ body: { projectName: "plain", type: "secret-manager" } }),
    );
    const wrongType = await tenant.admin.ssh.createCa({
      body: { projectId: secrets.project.id, friendlyName: "x", keyAlgorithm: "ED25519" },
    });
    expect(wrongType.status).toBe(400);
  });
});
