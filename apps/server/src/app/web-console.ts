import { existsSync, readdirSync } from "node:fs";
import { extname, join, resolve } from "node:path";
import express, { type RequestHandler } from "express";
import type { Logger } from "../lib/logger";

/** Paths the console never answers: the API, the enrollment protocols and `/metrics` (served only on METRICS_PORT) keep their JSON 404s. */
const NOT_CONSOLE = /^\/(api|\.well-known|metrics)(\/|$)/;

/**
 * Locks the console page to its own scripts and to this origin; style attributes stay allowed
 * because the chart colours its legend inline.
 */
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self' http://127.0.0.1:* http://localhost:*",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join("; ");

/** Encodings the console's build writes beside each asset (`name.br`, `name.gz`), best first. */
const ENCODED = [
  { encoding: "br", suffix: ".br" },
  { encoding: "gzip", suffix: ".gz" },
] as const;

/**
 * Hashed assets in the encoding the browser accepts, from the files the build compressed once
 * (nothing is compressed per request); the list of such files is read when the console is mounted.
 */
const precompressedAssets = (dir: string): RequestHandler => {
  const assetsDir = join(dir, "assets");
  const files = new Set(existsSync(assetsDir) ? readdirSync(assetsDir) : []);
  return (req, res, next) => {
    const name = req.path.startsWith("/assets/") ? req.path.slice("/assets/".length) : "";
    if (!name || name.includes("/") || !files.has(name)) return next();
    const offered = ENCODED.filter(({ suffix }) => files.has(name + suffix));
    if (offered.length === 0) return next();
    res.vary("Accept-Encoding");
    // Our order decides among the accepted ones: browsers list gzip before br with equal weight.
    const encoded = offered.find(({ encoding }) => req.acceptsEncodings(encoding) === encoding);
    if (!encoded) return next();
    res.type(extname(name));
    res.setHeader("content-encoding", encoded.encoding);
    res.setHeader("x-content-type-options", "nosniff");
    res.sendFile(join(assetsDir, name + encoded.suffix), { maxAge: "365d", immutable: true }, (error) =>
      error ? next(error) : undefined,
    );
  };
};

/**
 * The web console's built files at `/`, with index.html for every other GET (client-side routes).
 * Without a build (no index.html in the folder) nothing is mounted and `/` stays a JSON 404.
 */
export const webConsole = (configured: string | undefined, logger: Logger): RequestHandler | undefined => {
  if (!configured) return undefined;
  const dir = resolve(configured);
  const index = join(dir, "index.html");
  if (!existsSync(index)) {
    logger.info({ dir }, "web console not built: serving the API only (build it with `pnpm build`)");
    return undefined;
  }
  const assets = express.static(dir, {
    index: false,
    redirect: false,
    setHeaders: (res, path) => {
      res.setHeader("x-content-type-options", "nosniff");
      // Vite names every asset by its content hash, so it never changes under its name.
      if (path.startsWith(join(dir, "assets"))) res.setHeader("cache-control", "public, max-age=31536000, immutable");
    },
  });
  const compressed = precompressedAssets(dir);
  const sendPage: RequestHandler = (_req, res, next) => {
    res.setHeader("cache-control", "no-cache");
    res.setHeader("content-security-policy", CSP);
    res.setHeader("x-content-type-options", "nosniff");
    res.setHeader("referrer-policy", "no-referrer");
    res.sendFile(index, (error) => (error ? next(error) : undefined));
  };
  return (req, res, next) => {
    if (NOT_CONSOLE.test(req.path) || (req.method !== "GET" && req.method !== "HEAD")) return next();
    // A missing hashed asset is a 404, not the page: a stale tab then reloads instead of running HTML as script.
    const fallback = req.path.startsWith("/assets/") ? next : () => sendPage(req, res, next);
    const plain = () => {
      void assets(req, res, (error?: unknown) => (error ? next(error) : fallback()));
    };
    void compressed(req, res, (error?: unknown) => (error ? next(error) : plain()));
  };
};
