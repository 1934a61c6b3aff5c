import pino, { type Logger } from "pino";
import type { RequestHandler } from "express";

export type { Logger };

/** Structured JSON logs. Credentials never reach them: bodies are not logged, and known keys are redacted. */
export const createLogger = (level: string): Logger =>
  pino({
    level,
    base: undefined,
    redact: {
      paths: [
        "req.headers.authorization",
        "*.authorization",
        "*.password",
        "*.token",
        "*.accessToken",
        "*.clientSecret",
        "*.bindPass",
        "*.privateKey",
        "*.encryptionKey",
        "*.connectionString",
      ],
      censor: "[redacted]",
    },
  });

/** One line per request with status and duration; the path only, never the query or body. */
export const requestLog =
  (logger: Logger): RequestHandler =>
  (req, res, next) => {
    if (!logger.isLevelEnabled("info")) return next();
    const started = process.hrtime.bigint();
    res.on("finish", () => {
      logger.info({
        reqId: res.locals.reqId as string,
        method: req.method,
        path: req.path,
        status: res.statusCode,
        ms: Number(process.hrtime.bigint() - started) / 1e6,
      });
    });
    next();
  };
