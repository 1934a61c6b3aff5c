import { createHmac } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type Delivery = {
  headers: IncomingMessage["headers"];
  body: string;
  events: { id: string; seq: string; chainId: string }[];
};

/**
 * A real HTTP receiver for audit-log streams: records every delivery, checks nothing itself. It can
 * refuse connections (`down`), hold requests unanswered (`hold`) and answer again (`up`).
 */
export const startReceiver = async () => {
  const deliveries: Delivery[] = [];
  const held: ServerResponse[] = [];
  let mode: "up" | "hold" | "failing" = "up";
  let server: Server | undefined;
  let port = 0;
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const parsed = JSON.parse(body) as unknown;
      if (mode === "hold" && Array.isArray(parsed)) {
        held.push(res);
        return;
      }
      if (mode === "failing" && Array.isArray(parsed)) {
        res.writeHead(503).end();
        return;
      }
      deliveries.push({
        headers: req.headers,
        body,
        events: Array.isArray(parsed) ? (parsed as Delivery["events"]) : [],
      });
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  };
  const listen = () =>
    new Promise<void>((resolve) => {
      server = createServer(handler);
      server.listen(port, "127.0.0.1", () => {
        port = (server!.address() as AddressInfo).port;
        resolve();
      });
    });
  await listen();
  return {
    url: () => `http://127.0.0.1:${port}/audit`,
    deliveries,
    /** Every delivered event id, in arrival order (duplicates kept). */
    eventIds: () => deliveries.flatMap((d) => d.events.map((e) => e.id)),
    setMode: (next: "up" | "hold" | "failing") => {
      mode = next;
      if (next !== "hold") for (const res of held.splice(0)) res.destroy();
    },
    heldCount: () => held.length,
    /** Stop accepting connections at all: deliveries fail with ECONNREFUSED. */
    down: async () => {
      for (const res of held.splice(0)) res.destroy();
      server!.closeAllConnections();
      await new Promise<void>((resolve) => server!.close(() => resolve()));
    },
    up: listen,
    close: async () => {
      for (const res of held.splice(0)) res.destroy();
      server?.closeAllConnections();
      await new Promise<void>((resolve) => server?.close(() => resolve()) ?? resolve());
    },
  };
};

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/** The receiver's side of `X-Keyward-Signature`. */
export const signatureValid = (delivery: Delivery, secret: string) => {
  const header = String(delivery.headers["x-keyward-signature"] ?? "");
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  if (!match) return false;
  const expected = createHmac("sha256", secret).update(`${match[1]}.${delivery.body}`).digest("hex");
  return expected === match[2];
};

export const waitFor = async (check: () => boolean | Promise<boolean>, timeoutMs: number, what: string) => {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
};
