import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { get, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { brotliCompressSync, gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/app/create-app";
import { getTestApp } from "../helpers/app";

/** The real app over the shared test database, with the console folder set to `dir`. */
const listen = async (dir: string) => {
  const { deps } = await getTestApp();
  const server = createApp({ ...deps, env: { ...deps.env, WEB_DIST_DIR: dir } }).listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  return { server, baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
};

/** A GET whose body is read as sent (fetch would undo the content encoding). */
const rawGet = (url: string, headers: Record<string, string>) =>
  new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }>(
    (resolve, reject) => {
      get(url, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
      }).on("error", reject);
    },
  );

const SCRIPT = `console.log(${JSON.stringify("x".repeat(4000))})`;

const close = (server: Server) => new Promise((resolve) => server.close(resolve));

describe("web console served at /", () => {
  let built: { server: Server; baseUrl: string };
  let missing: { server: Server; baseUrl: string };

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), "keyward-web-"));
    mkdirSync(join(dir, "assets"));
    writeFileSync(join(dir, "index.html"), "<!doctype html><title>console</title>");
    writeFileSync(join(dir, "assets", "app-abc123.js"), "console.log(1)");
    writeFileSync(join(dir, "assets", "big-def456.js"), SCRIPT);
    writeFileSync(join(dir, "assets", "big-def456.js.gz"), gzipSync(SCRIPT));
    writeFileSync(join(dir, "assets", "big-def456.js.br"), brotliCompressSync(SCRIPT));
    built = await listen(dir);
    missing = await listen(mkdtempSync(join(tmpdir(), "keyward-web-empty-")));
  });
  afterAll(async () => {
    await close(built.server);
    await close(missing.server);
  });

  it("serves the page at / with a content security policy", async () => {
    const res = await fetch(`${built.baseUrl}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/text\/html/);
    expect(res.headers.get("content-security-policy")).toContain("default-src 'self'");
    expect(await res.text()).toContain("<title>console</title>");
  });

  it("answers client routes with the page so a reload keeps the screen", async () => {
    const res = await fetch(`${built.baseUrl}/projects/some-id/secrets?env=dev`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("<title>console</title>");
  });

  it("serves hashed assets as immutable files", async () => {
    const res = await fetch(`${built.baseUrl}/assets/app-abc123.js`);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toContain("immutable");
    expect(await res.text()).toBe("console.log(1)");
  });

  it("sends an asset compressed by the build in the encoding the browser accepts", async () => {
    const url = `${built.baseUrl}/assets/big-def456.js`;
    const br = await rawGet(url, { "accept-encoding": "gzip, deflate, br" });
    expect(br.status).toBe(200);
    expect(br.headers["content-encoding"]).toBe("br");
    expect(br.headers["content-type"]).toMatch(/javascript/);
    expect(br.headers["vary"]).toMatch(/accept-encoding/i);
    expect(br.headers["cache-control"]).toContain("immutable");
    expect(br.body.equals(brotliCompressSync(SCRIPT))).toBe(true);

    const gzip = await rawGet(url, { "accept-encoding": "gzip" });
    expect(gzip.headers["content-encoding"]).toBe("gzip");
    expect(gzip.body.equals(gzipSync(SCRIPT))).toBe(true);

    const plain = await rawGet(url, {});
    expect(plain.headers["content-encoding"]).toBeUndefined();
    expect(plain.body.toString()).toBe(SCRIPT);
    const refused = await rawGet(url, { "accept-encoding": "br;q=0, gzip;q=0" });
    expect(refused.headers["content-encoding"]).toBeUndefined();
    expect(refused.body.toString()).toBe(SCRIPT);

    // An asset the build left uncompressed (too small) is sent as it is, whatever the browser accepts.
    const small = await rawGet(`${built.baseUrl}/assets/app-abc123.js`, { "accept-encoding": "br, gzip" });
    expect(small.headers["content-encoding"]).toBeUndefined();
    expect(small.body.toString()).toBe("console.log(1)");
  });

  it("keeps JSON 404s for unknown API routes, missing assets and non-GET requests", async () => {
    for (const [method, path] of [
      ["GET", "/api/v1/does-not-exist"],
      ["GET", "/api"],
      ["GET", "/assets/gone-000.js"],
      ["GET", "/.well-known/unknown"],
      ["GET", "/metrics"],
      ["POST", "/projects"],
    ] as const) {
      const res = await fetch(`${built.baseUrl}${path}`, { method });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.headers.get("content-type")).toMatch(/application\/json/);
    }
  });

  it("leaves / a JSON 404 when the console is not built", async () => {
    const res = await fetch(`${missing.baseUrl}/`);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { statusCode: number }).statusCode).toBe(404);
  });
});
