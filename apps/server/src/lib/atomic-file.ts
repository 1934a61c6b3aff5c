import { existsSync, fsyncSync, linkSync, openSync, closeSync, renameSync, rmSync } from "node:fs";
import { open } from "node:fs/promises";
import { dirname } from "node:path";
import { Writable } from "node:stream";

export class FileExistsError extends Error {}

const syncDirectory = (dir: string) => {
  try {
    const fd = openSync(dir, "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // Not every filesystem lets a directory be synced; the file itself was.
  }
};

/** Puts `partial` at `path` unless a file is there: a hard link fails on an existing name, rename would replace it. */
const publish = (partial: string, path: string) => {
  try {
    linkSync(partial, path);
    rmSync(partial);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST") throw new FileExistsError(`${path} exists`);
    if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP") throw error;
    // A filesystem without hard links: checked just before, so only a writer racing this one can lose.
    if (existsSync(path)) throw new FileExistsError(`${path} exists`);
    renameSync(partial, path);
  }
  syncDirectory(dirname(path));
};

/**
 * Writes a file whole or not at all, readable by its owner only: `produce` writes (and ends) the stream
 * given, into `<path>.partial` (mode 0600), which is synced to disk and then put at `path`. An existing
 * file at `path` is never replaced (FileExistsError); on any failure the partial file is removed.
 */
export const writeFileAtomically = async <T>(
  path: string,
  produce: (out: Writable) => Promise<T>,
): Promise<{ result: T; bytes: number }> => {
  if (existsSync(path)) throw new FileExistsError(`${path} exists`);
  const partial = `${path}.partial`;
  rmSync(partial, { force: true });
  const handle = await open(partial, "wx", 0o600);
  let bytes = 0;
  const writeAll = async (chunk: Buffer) => {
    for (let at = 0; at < chunk.length;) at += (await handle.write(chunk, at, chunk.length - at)).bytesWritten;
    bytes += chunk.length;
  };
  const out = new Writable({
    write: (chunk: Buffer, _encoding, callback) => void writeAll(chunk).then(() => callback(), callback),
    final: (callback) => void handle.sync().then(() => callback(), callback),
  });
  try {
    const result = await produce(out);
    if (!out.writableFinished) throw new Error("the file was not written to its end");
    await handle.close();
    publish(partial, path);
    return { result, bytes };
  } catch (error) {
    await handle.close().catch(() => undefined);
    rmSync(partial, { force: true });
    throw error;
  }
};
