import { randomBytes } from "node:crypto";
import { chmodSync, rmSync } from "node:fs";
import { open } from "node:fs/promises";
import { connect, createServer, type Socket } from "node:net";
import { join } from "node:path";
import { Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { Logger } from "../lib/logger";

/**
 * The local control socket of a process serving an embedded (PGlite) database, `DATA_DIR/keyward.sock`:
 * the data directory is locked by that process, so a backup of it is asked for here. Mode 0600: only
 * the server's own user (and root) may connect. One request per connection, one JSON line:
 *
 *   -> {"op":"backup"}
 *   <- {"ok":true,"bytes":N} then N bytes: the sealed backup file   or   {"error":"..."}
 *
 * The server writes the backup to a file of its own first (in DATA_DIR, unlinked at once, so nothing
 * is left behind), so its database transaction never waits for a slow reader; then it sends the file.
 */
export const CONTROL_SOCKET = "keyward.sock";

const MAX_REQUEST_BYTES = 1024;

type Handlers = { logger: Logger; backup: (out: Writable) => Promise<unknown> };

/** Writes the backup into an unlinked file of DATA_DIR and returns its handle, positioned nowhere. */
const backupToScratch = async (dataDir: string, backup: Handlers["backup"]) => {
  const path = join(dataDir, `.backup-${process.pid}-${randomBytes(6).toString("hex")}`);
  const handle = await open(path, "wx+", 0o600);
  rmSync(path, { force: true });
  let size = 0;
  try {
    const out = new Writable({
      write: (chunk: Buffer, _encoding, callback) =>
        void handle.write(chunk, 0, chunk.length, size).then(({ bytesWritten }) => {
          size += bytesWritten;
          callback(bytesWritten === chunk.length ? null : new Error("short write"));
        }, callback),
    });
    await backup(out);
    return { handle, size };
  } catch (error) {
    await handle.close();
    throw error;
  }
};

export const startControlSocket = (dataDir: string, handlers: Handlers) => {
  const path = join(dataDir, CONTROL_SOCKET);
  // This process holds the data directory's lock: a socket file here was left by one that died.
  rmSync(path, { force: true });
  let busy = false;
  const sockets = new Set<Socket>();
  const reply = (socket: Socket, message: object) => socket.end(`${JSON.stringify(message)}\n`);

  const serveBackup = async (socket: Socket) => {
    if (busy) return reply(socket, { error: "a backup of this instance is already running" });
    busy = true;
    try {
      const { handle, size } = await backupToScratch(dataDir, handlers.backup);
      try {
        socket.write(`${JSON.stringify({ ok: true, bytes: size })}\n`);
        await pipeline(handle.createReadStream({ start: 0, autoClose: false }), socket);
      } finally {
        await handle.close();
      }
      handlers.logger.info({ bytes: size }, "backup sent over the control socket");
    } catch (error) {
      handlers.logger.error({ err: error }, "backup over the control socket failed");
      if (!socket.destroyed && socket.bytesWritten === 0) reply(socket, { error: (error as Error).message });
      else socket.destroy();
    } finally {
      busy = false;
    }
  };

  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => undefined);
    let request = "";
    const onData = (chunk: Buffer) => {
      request += chunk.toString("utf8");
      const end = request.indexOf("\n");
      if (end < 0) {
        if (request.length > MAX_REQUEST_BYTES) reply(socket, { error: "request too long" });
        return;
      }
      socket.off("data", onData);
      let op: unknown;
      try {
        op = (JSON.parse(request.slice(0, end)) as { op?: unknown }).op;
      } catch {
        return reply(socket, { error: "a request is one JSON line" });
      }
      if (op !== "backup") return reply(socket, { error: "unknown op" });
      void serveBackup(socket);
    };
    socket.on("data", onData);
  });
  server.on("error", (error) =>
    handlers.logger.warn(
      { err: error, path },
      "control socket unavailable: a backup of this instance needs the process stopped first",
    ),
  );
  // Created owner-only from the start: no moment in which another user could connect.
  const umask = process.umask(0o177);
  try {
    server.listen(path, () => chmodSync(path, 0o600));
  } finally {
    process.umask(umask);
  }
  return {
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
        rmSync(path, { force: true });
      }),
  };
};

/**
 * Asks the process serving `dataDir` for a backup: the socket positioned at the file's first byte and
 * the size announced, or undefined when no process listens there.
 */
export const requestBackup = (dataDir: string): Promise<{ socket: Socket; bytes: number } | undefined> =>
  new Promise((resolve, reject) => {
    const socket = connect(join(dataDir, CONTROL_SOCKET));
    let head = Buffer.alloc(0);
    const done = () => {
      socket.off("data", onData);
      socket.off("error", onError);
      socket.off("end", onEnd);
    };
    const fail = (error: Error) => {
      done();
      socket.destroy();
      reject(error);
    };
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf(0x0a);
      if (end < 0) {
        if (head.length > MAX_REQUEST_BYTES) fail(new Error("the serving process answered no header"));
        return;
      }
      done();
      socket.pause();
      let answer: { ok?: boolean; bytes?: number; error?: string };
      try {
        answer = JSON.parse(head.subarray(0, end).toString("utf8")) as typeof answer;
      } catch {
        return fail(new Error("the serving process answered no header"));
      }
      if (!answer.ok || typeof answer.bytes !== "number")
        return fail(new Error(`the serving process refused: ${answer.error ?? "no answer"}`));
      const rest = head.subarray(end + 1);
      if (rest.length > 0) socket.unshift(rest);
      // Heard until the caller pipes the socket (its pipeline then hears errors too).
      socket.on("error", () => undefined);
      resolve({ socket, bytes: answer.bytes });
    };
    const onError = (error: NodeJS.ErrnoException) => {
      if (error.code !== "ENOENT" && error.code !== "ECONNREFUSED") return fail(error);
      done();
      resolve(undefined);
    };
    const onEnd = () => fail(new Error("the serving process closed the control socket"));
    socket.once("connect", () => socket.write(`${JSON.stringify({ op: "backup" })}\n`));
    socket.on("data", onData);
    socket.on("error", onError);
    socket.on("end", onEnd);
  });
