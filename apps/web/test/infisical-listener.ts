import { createServer, type IncomingMessage } from "node:http";
import { once } from "node:events";
import type { AddressInfo } from "node:net";

/** What the listener was sent: a preflight, or a request it read as the session. */
export type ListenerRequest = { method: string; origin: string | undefined; body: string };

const bodyOf = async (req: IncomingMessage) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
};

/**
 * A loopback listener on 127.0.0.1 that behaves like the Infisical CLI's during `infisical login`:
 * CORS for exactly the site's origin, methods POST and OPTIONS, the one header `Content-Type`,
 * credentials allowed. A preflight is answered 204 (with the CORS headers only for that origin) and
 * goes no further; any other request, on any path, is read as the JSON session and answered 200 (a
 * request from another origin is still read, but gets no CORS headers, so its page cannot see the
 * answer). `session` settles with the first request it read as JSON.
 */
export const startInfisicalListener = async (siteOrigin: string) => {
  const requests: ListenerRequest[] = [];
  let deliver: (session: Record<string, unknown>) => void = () => undefined;
  const session = new Promise<Record<string, unknown>>((resolve) => (deliver = resolve));
  const server = createServer((req, res) => {
    void (async () => {
      const origin = req.headers.origin;
      const allowed = origin === siteOrigin;
      res.setHeader("vary", "Origin");
      const requestedMethod = req.headers["access-control-request-method"];
      if (req.method === "OPTIONS" && requestedMethod) {
        requests.push({ method: "OPTIONS", origin, body: "" });
        const headers = (req.headers["access-control-request-headers"] ?? "")
          .split(",")
          .map((header) => header.trim().toLowerCase())
          .filter(Boolean);
        const passes =
          allowed && ["POST", "OPTIONS"].includes(requestedMethod) && headers.every((h) => h === "content-type");
        if (passes) {
          res.setHeader("access-control-allow-origin", origin);
          res.setHeader("access-control-allow-methods", requestedMethod);
          if (headers.length) res.setHeader("access-control-allow-headers", headers.join(", "));
          res.setHeader("access-control-allow-credentials", "true");
        }
        return void res.writeHead(204).end();
      }
      if (allowed) {
        res.setHeader("access-control-allow-origin", origin);
        res.setHeader("access-control-allow-credentials", "true");
      }
      const body = await bodyOf(req);
      requests.push({ method: req.method ?? "", origin, body });
      try {
        deliver(JSON.parse(body) as Record<string, unknown>);
      } catch {
        // The CLI gives up on a body that is not JSON; the test sees it in `requests`.
      }
      res.writeHead(200).end();
    })();
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    session,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
};
