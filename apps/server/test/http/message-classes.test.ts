import { IncomingMessage, ServerResponse, type RequestListener, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { afterEach, describe, expect, it } from "vitest";
import { loadEnv } from "../../src/env";
import { createHttpServer } from "../../src/http/server";

const listen = async (server: Server) => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};

describe("the HTTP server's request and response objects", () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    server = undefined;
  });

  it("are built with the Express app's prototypes, so Express never reshapes them", async () => {
    const app = express();
    app.get("/probe", (req, res) => {
      res.status(201).json({ path: req.path, host: req.get("host") !== undefined });
    });
    const seen: { request: boolean; response: boolean; node: boolean }[] = [];
    // What node hands the listener, before Express's init middleware has run.
    const listener = Object.assign(
      ((req, res) => {
        seen.push({
          request: Object.getPrototypeOf(req) === app.request,
          response: Object.getPrototypeOf(res) === app.response,
          node: req instanceof IncomingMessage && res instanceof ServerResponse,
        });
        app(req, res);
      }) as RequestListener,
      { request: app.request, response: app.response },
    );
    server = createHttpServer(listener, loadEnv({}));
    const base = await listen(server);
    for (let i = 0; i < 3; i += 1) {
      const res = await fetch(`${base}/probe`);
      expect(res.status).toBe(201);
      expect(await res.json()).toEqual({ path: "/probe", host: true });
    }
    expect(seen).toEqual(Array.from({ length: 3 }, () => ({ request: true, response: true, node: true })));
  });

  it("are node's own for a listener that is not an Express app", async () => {
    let prototypes: [unknown, unknown] | undefined;
    server = createHttpServer((req, res) => {
      prototypes = [Object.getPrototypeOf(req), Object.getPrototypeOf(res)];
      res.end("ok");
    }, loadEnv({}));
    const base = await listen(server);
    expect(await (await fetch(base)).text()).toBe("ok");
    expect(prototypes).toEqual([IncomingMessage.prototype, ServerResponse.prototype]);
  });
});
