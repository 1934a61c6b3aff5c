import { randomBytes } from "node:crypto";
import {
  chmodSync,
  closeSync,
  fchmodSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";

/**
 * Replace `path` with `content` so a reader sees the old file or the new one, never half of either:
 * a new file is created exclusively in the same folder (so the rename stays on one file system),
 * given its mode before anything is written, synced, then renamed over the old one.
 */
export const writeFileAtomic = (path: string, content: string | Buffer, mode = 0o600) => {
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const temporary = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    const fd = openSync(temporary, "wx", 0o600);
    try {
      // The creation mode is narrowed by the umask; the file gets exactly the mode asked for.
      fchmodSync(fd, mode);
      writeFileSync(fd, content);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
};

/** The file's text, or undefined when there is none (or it cannot be read). */
export const readFileIfAny = (path: string) => {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
};

/** Give an existing file `mode` when it has another (best effort: the next write sets it anyway). */
export const keepMode = (path: string, mode: number) => {
  try {
    if ((statSync(path).mode & 0o7777) !== mode) chmodSync(path, mode);
  } catch {
    // Gone or not ours: the next write creates it with the mode.
  }
};
