import { once } from "node:events";
import { writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { SMTPServer } from "smtp-server";

export type Received = { from: string; to: string[]; data: string };

/**
 * A real SMTP server on loopback that keeps what it receives. With `dir`, each message is also
 * written there as a file (for tests in other processes); with `acceptDomain`, mail to any other
 * domain is refused, as a mail server refuses an unknown recipient.
 */
export const startSmtpSink = async (options: { dir?: string; acceptDomain?: string } = {}) => {
  const received: Received[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    onRcptTo(address, _session, callback) {
      const domain = address.address.slice(address.address.lastIndexOf("@") + 1).toLowerCase();
      if (options.acceptDomain && domain !== options.acceptDomain) {
        return callback(Object.assign(new Error(`no mailbox for ${address.address}`), { responseCode: 550 }));
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        const mail = {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((r) => r.address),
          data: Buffer.concat(chunks).toString("utf8"),
        };
        received.push(mail);
        if (options.dir) writeFileSync(join(options.dir, `${received.length}.json`), JSON.stringify(mail));
        callback();
      });
    },
  });
  server.listen(0, "127.0.0.1");
  await once(server.server, "listening");
  const port = (server.server.address() as AddressInfo).port;
  return { port, received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
};
