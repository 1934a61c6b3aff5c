import { createTransport } from "nodemailer";

/** Sends Keyward's e-mails (invitations) through the configured SMTP server. */
export type Mailer = { send: (message: { to: string; subject: string; text: string }) => Promise<void> };

/** A mailer for SMTP_URL, or undefined when no mail server is configured. */
export const createMailer = (smtpUrl: string | undefined, from: string): Mailer | undefined => {
  if (!smtpUrl) return undefined;
  const transport = createTransport(smtpUrl, { from });
  return {
    send: async (message) => {
      await transport.sendMail({ ...message, from });
    },
  };
};
