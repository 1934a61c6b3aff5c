import { IncomingMessage, ServerResponse, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { afterEach, describe, expect, it } from "vitest";
import { loadEnv } from "../../src/env";
import { createHttpServer } from "../../src/app/server";
import { hasFastProperties } from "../helpers/v8-layout";

const listen = async (server: Server) => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};

describe("the HTTP server's request and response objects", () => {
  let server: Server | undefined;
  afterEach(async () => {
    const open = server;
    server = undefined;
    if (!open) return;
    open.closeAllConnections();
    await new Promise((resolve) => open.close(resolve));
  });

  it("are built with the Express app's prototypes, so Express never reshapes them", async () => {
    const app = express();
    app.get("/probe", (req, res) => {
      res.status(201).json({ path: req.path, host: req.get("host") !== undefined });
    });
    server = createHttpServer(app, loadEnv({}));
    const seen: { request: boolean; response: boolean; node: boolean; fast: boolean }[] = [];
    // What node hands the app, before Express's init middleware has run.
    server.prependListener("request", (req: IncomingMessage, res: ServerResponse) => {
      seen.push({
        request: Object.getPrototypeOf(req) === app.request,
        response: Object.getPrototypeOf(res) === app.response,
        node: req instanceof IncomingMessage && res instanceof ServerResponse,
        fast: hasFastProperties(req) && hasFastProperties(res),
      });
    });
    const base = await listen(server);
    for (let i = 0; i < 3; i += 1) {
      const res = await fetch(`${base}/probe`);
      expect(res.status).toBe(201);
      expect(await res.json()).toEqual({ path: "/probe", host: true });
    }
    expect(seen).toEqual(Array.from({ length: 3 }, () => ({ request: true, response: true, node: true, fast: true })));
  });

  it("keep Express's own members and methods behind the app's prototypes", () => {
    const app = express();
    server = createHttpServer(app, loadEnv({}));
    expect((app.request as { app?: unknown }).app).toBe(app);
    expect((app.response as { app?: unknown }).app).toBe(app);
    expect(typeof (app.response as unknown as Record<string, unknown>).json).toBe("function");
    expect(typeof (app.request as unknown as Record<string, unknown>).get).toBe("function");
    expect(Object.create(app.response)).toBeInstanceOf(ServerResponse);
  });

  it("are the same classes for every server of one app", async () => {
    const app = express();
    app.get("/probe", (_req, res) => res.json({ ok: true }));
    const first = createHttpServer(app, loadEnv({}));
    const [request, response] = [app.request, app.response];
    server = createHttpServer(app, loadEnv({}));
    expect(app.request).toBe(request);
    expect(app.response).toBe(response);
    let prototypes: [unknown, unknown] | undefined;
    server.prependListener("request", (req: IncomingMessage, res: ServerResponse) => {
      prototypes = [Object.getPrototypeOf(req), Object.getPrototypeOf(res)];
    });
    const base = await listen(server);
    expect(await (await fetch(`${base}/probe`)).json()).toEqual({ ok: true });
    expect(prototypes?.[0]).toBe(request);
    expect(prototypes?.[1]).toBe(response);
    first.close();
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
