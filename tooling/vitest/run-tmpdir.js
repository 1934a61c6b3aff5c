import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * A test run's temporary files (data directories, servers' sockets and logs, CLI configurations) all go
 * under one directory of the run's own, removed when the run ends: files and servers get it as TMPDIR,
 * which the workers and every process they start inherit. Runs no longer leave their leftovers in /tmp.
 * It is open as /tmp is (sticky, writable by all), since some servers run as their own users.
 */
export default function setup() {
  const dir = mkdtempSync(join(tmpdir(), "keyward-run-"));
  chmodSync(dir, 0o1777);
  process.env.TMPDIR = dir;
  return () => rmSync(dir, { recursive: true, force: true });
}
