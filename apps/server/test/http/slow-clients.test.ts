import { connect, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/app/create-app";
import { loadEnv } from "../../src/env";
import { createHttpServer } from "../../src/app/server";
import { getTestApp } from "../helpers/app";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A raw connection that records what the server wrote and when it closed. */
const open = async (port: number) => {
  const socket: Socket = connect(port, "127.0.0.1");
  await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject));
  const state = { received: "", closedAt: 0 };
  socket.on("data", (chunk: Buffer) => (state.received += chunk.toString("utf8")));
  socket.on("close", () => (state.closedAt = Date.now()));
  socket.on("error", () => undefined);
  return { socket, state };
};

/** Write `text` one byte every `gap` ms until it is all sent or the server closes the socket. */
const dribble = async (socket: Socket, text: string, gap: number) => {
  for (const char of text) {
    if (socket.destroyed || !socket.writable) return;
    socket.write(char);
    await sleep(gap);
  }
};

describe("slow clients", () => {
  let server: Server;
  let port: number;

  beforeAll(async () => {
    const app = await getTestApp();
    const env = loadEnv({
      HTTP_HEADERS_TIMEOUT_MS: "400",
      HTTP_REQUEST_TIMEOUT_MS: "800",
      HTTP_KEEP_ALIVE_TIMEOUT_MS: "300",
    });
    server = createHttpServer(createApp(app.deps), env);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it("disconnects a client that sends its headers one byte at a time, with a JSON 408", async () => {
    const { socket, state } = await open(port);
    const started = Date.now();
    await dribble(socket, `GET /api/status HTTP/1.1\r\nHost: x\r\nX-Slow: ${"a".repeat(200)}\r\n\r\n`, 20);
    await sleep(100);
    expect(state.closedAt).toBeGreaterThan(0);
    expect(state.closedAt - started).toBeLessThan(3_000);
    expect(state.received).toMatch(/^HTTP\/1\.1 408 /);
    const body = JSON.parse(state.received.slice(state.received.indexOf("\r\n\r\n") + 4)) as unknown;
    expect(body).toMatchObject({ statusCode: 408, error: "RequestTimeout", reqId: expect.stringMatching(/^req-/) });
  });

  it("disconnects a client that sends its body one byte at a time", async () => {
    const { socket, state } = await open(port);
    const started = Date.now();
    const body = JSON.stringify({ name: "x".repeat(300) });
    socket.write(
      `POST /api/v1/admin/bootstrap HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    await dribble(socket, body, 20);
    await sleep(100);
    expect(state.closedAt).toBeGreaterThan(0);
    expect(state.closedAt - started).toBeLessThan(3_000);
  });

  it("closes an idle keep-alive connection after the keep-alive timeout (plus node's one-second grace)", async () => {
    const { socket, state } = await open(port);
    socket.write("GET /api/status HTTP/1.1\r\nHost: x\r\n\r\n");
    await sleep(150);
    expect(state.received).toMatch(/^HTTP\/1\.1 200 /);
    expect(state.closedAt).toBe(0);
    await sleep(1_700);
    expect(state.closedAt).toBeGreaterThan(0);
  });

  it("still serves a normal request, and several on one keep-alive connection", async () => {
    const { socket, state } = await open(port);
    socket.write("GET /api/status HTTP/1.1\r\nHost: x\r\n\r\n");
    await sleep(100);
    socket.write("GET /api/status HTTP/1.1\r\nHost: x\r\n\r\n");
    await sleep(100);
    expect(state.received.match(/HTTP\/1\.1 200 /g)).toHaveLength(2);
    socket.destroy();
    const res = await fetch(`http://127.0.0.1:${port}/api/status`);
    expect(res.status).toBe(200);
  });

  it("refuses a headers timeout longer than the request timeout at start-up", () => {
    expect(() => loadEnv({ HTTP_HEADERS_TIMEOUT_MS: "5000", HTTP_REQUEST_TIMEOUT_MS: "1000" })).toThrow(
      /HTTP_HEADERS_TIMEOUT_MS/,
    );
  });
});
