/**
 * The agent's log: one JSON object a line on stderr. Callers pass names, paths, ids and reasons,
 * never a secret value or a token; `reason` strings come from errors the agent builds itself or from
 * the server's messages, which carry no values either.
 */
export type LogFields = Record<string, string | number | boolean | null | undefined | string[]>;

export type Logger = {
  info: (msg: string, fields?: LogFields) => void;
  warn: (msg: string, fields?: LogFields) => void;
  error: (msg: string, fields?: LogFields) => void;
};

const write = (level: string, msg: string, fields: LogFields = {}) => {
  process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields })}\n`);
};

export const jsonLogger: Logger = {
  info: (msg, fields) => write("info", msg, fields),
  warn: (msg, fields) => write("warn", msg, fields),
  error: (msg, fields) => write("error", msg, fields),
};

/** An error's message, for a log line. */
export const reasonOf = (error: unknown) => (error instanceof Error ? error.message : String(error));
