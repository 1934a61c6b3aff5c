import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app";
import { startSmtpSink } from "../helpers/smtp-sink";
import { createTenant, expectOk, uniqueName } from "../helpers/tenant";

describe("invitations by e-mail", () => {
  let sink: Awaited<ReturnType<typeof startSmtpSink>>;
  let app: TestApp;
  beforeAll(async () => {
    sink = await startSmtpSink();
    app = await startTestApp({
      SMTP_URL: `smtp://127.0.0.1:${sink.port}`,
      SMTP_FROM: "Keyward <keyward@example.test>",
    });
  });
  afterAll(async () => {
    await app.close();
    await sink.close();
  });

  it("sends each invitee an e-mail with their sign-in link instead of returning the links", async () => {
    const tenant = await createTenant(app);
    const email = `${uniqueName("invitee")}@example.test`;
    const answer = expectOk(
      await tenant.admin.users.inviteToOrg({
        body: { inviteeEmails: [email], organizationId: tenant.orgId, organizationRoleSlug: "member" },
      }),
    );
    expect(answer).toEqual({ message: `Sent an invitation e-mail to ${email}`, completeInviteLinks: [] });
    const mail = sink.received.find((m) => m.to.includes(email));
    expect(mail?.from).toBe("keyward@example.test");
    // The body is quoted-printable: undo its soft line breaks and escaped "=".
    const body = mail!.data.replace(/=\r?\n/g, "").replace(/=3D/g, "=");
    expect(body).toContain(`/login?org=${tenant.orgSlug}&email=${encodeURIComponent(email)}`);
  });

  it("returns the links it could not send when the mail server does not answer", async () => {
    const closed = await startSmtpSink();
    await closed.close();
    const offline = await startTestApp({ SMTP_URL: `smtp://127.0.0.1:${closed.port}` });
    try {
      const tenant = await createTenant(offline);
      const email = `${uniqueName("invitee")}@example.test`;
      const answer = expectOk(
        await tenant.admin.users.inviteToOrg({
          body: { inviteeEmails: [email], organizationId: tenant.orgId, organizationRoleSlug: "member" },
        }),
      );
      expect(answer.message).toBe(`Send an invite link to ${email}`);
      expect(answer.completeInviteLinks).toEqual([{ email, link: expect.stringContaining("/login?org=") }]);
    } finally {
      await offline.close();
    }
  });
});
