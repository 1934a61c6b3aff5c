import pino, { type Logger } from "pino";

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
