import { createKeywardClient, ok } from "@keyward/client";
import { describe, expect, it } from "vitest";
import { browserPerTest, screenshot, signInWithToken } from "./browser";
import { testContext } from "./context";
import { projectMemberToken } from "./members";

const { baseUrl, browserEndpoint, seeded } = testContext();
const admin = createKeywardClient({ baseUrl, token: seeded.token });

const ui = browserPerTest(browserEndpoint);

/** An SSH project with a CA, a template, a host that lets alice in as deploy, and one issued certificate. */
const sshProject = async (name: string) => {
  const { project } = await ok(admin.projects.create({ body: { projectName: name, type: "ssh" } }));
  const { ca } = await ok(
    admin.ssh.createCa({ body: { projectId: project.id, friendlyName: "users", keyAlgorithm: "ED25519" } }),
  );
  const template = await ok(
    admin.ssh.createTemplate({
      body: {
        sshCaId: ca.id,
        name: "ops",
        allowedUsers: ["deploy"],
        allowedHosts: [],
        allowUserCertificates: true,
        allowHostCertificates: false,
        allowCustomKeyIds: false,
      },
    }),
  );
  await ok(
    admin.ssh.createHost({
      body: {
        projectId: project.id,
        hostname: "db1.example.test",
        loginMappings: [{ loginUser: "deploy", allowedPrincipals: { usernames: ["alice@example.test"] } }],
      },
    }),
  );
  const issued = await ok(
    admin.ssh.issue({ body: { certificateTemplateId: template.id, certType: "user", principals: ["deploy"] } }),
  );
  return { project, issued };
};

describe("the SSH screen", () => {
  it("shows an SSH project's CAs, hosts and certificates, and revokes a certificate", async () => {
    const { project, issued } = await sshProject("Fleet SSH");
    await signInWithToken(ui.page, baseUrl, seeded.token);
    // The projects list links to a project's secrets tab; an SSH project opens on its SSH tab.
    await ui.page.goto(`${baseUrl}/projects/${project.id}/secrets`);
    await ui.page.getByRole("link", { name: "SSH", exact: true }).and(ui.page.locator("[aria-current=page]")).waitFor();
    const cas = ui.page.getByRole("table", { name: "Certificate authorities" });
    // The CA made here, and the project's default user and host CAs its first host created.
    await cas.getByRole("rowheader", { name: "users" }).waitFor();
    expect(await cas.getByRole("rowheader").allTextContents()).toEqual(["users", "User CA", "Host CA"]);
    const users = cas.getByRole("row").filter({ has: ui.page.getByRole("rowheader", { name: "users" }) });
    expect(await users.getByRole("link", { name: "Revocation list" }).getAttribute("href")).toMatch(/\/krl$/);
    const templates = ui.page.getByRole("table", { name: "Certificate templates" });
    const ops = templates.getByRole("row").filter({ has: ui.page.getByRole("rowheader", { name: "ops" }) });
    expect(await ops.getByRole("cell").allTextContents()).toEqual(["user", "deploy", "—", "1h (1d)", "active"]);
    const hosts = ui.page.getByRole("table", { name: "Hosts" });
    await hosts.getByText("alice@example.test").waitFor();
    const certificates = ui.page.getByRole("table", { name: "Signed certificates" });
    const row = certificates.getByRole("row").filter({ hasText: issued.serialNumber });
    await row.getByText("active").waitFor();
    await screenshot(ui.page, "ssh");
    await row.getByRole("button", { name: `Revoke certificate ${issued.serialNumber}` }).click();
    await row.getByText("revoked").waitFor();
    expect(await row.getByRole("button").count()).toBe(0);
    const { certificates: listed } = await ok(
      admin.ssh.projectCertificates({ params: { projectId: project.id }, query: {} }),
    );
    expect(listed.find((c) => c.serialNumber === issued.serialNumber)?.status).toBe("revoked");
    expect(ui.watcher.unexpected()).toEqual([]);
  });

  it("shows the server's refusal to a member without SSH rights", async () => {
    const { project } = await sshProject("Locked SSH");
    const { token: accessToken } = await projectMemberToken(admin, project, "ssh-outsider", "no-access");
    await signInWithToken(ui.page, baseUrl, accessToken);
    await ui.page.goto(`${baseUrl}/projects/${project.id}/ssh`);
    await ui.page.getByRole("alert").filter({ hasText: "ssh-certificate-authorities" }).waitFor();
    await ui.page.getByRole("alert").filter({ hasText: "ssh-hosts" }).waitFor();
  });
});
