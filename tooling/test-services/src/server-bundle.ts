import { execFile } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);
const root = fileURLToPath(new URL("../../../", import.meta.url));
const serverDir = join(root, "apps/server");
const buildsDir = join(serverDir, ".test-build");
/** What the bundle is made of: the server's sources, the contract bundled into it, and the locked dependencies. */
const SOURCES = [
  "apps/server/src",
  "apps/server/package.json",
  "apps/server/tsup.config.ts",
  "packages/contract/src",
  "pnpm-lock.yaml",
];

const filesUnder = (path: string): string[] =>
  statSync(path).isDirectory()
    ? readdirSync(path)
        .sort()
        .flatMap((name) => filesUnder(join(path, name)))
    : [path];

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const sourceHash = () => {
  const hash = createHash("sha256");
  for (const source of SOURCES)
    for (const file of filesUnder(join(root, source)))
      hash.update(`${relative(root, file)}\0`).update(readFileSync(file));
  return hash.digest("hex").slice(0, 16);
};

/** The built server: its entry, and the migrated PGlite template beside it that a new data directory copies. */
export type ServerBundle = { main: string; template: string };

let building: Promise<ServerBundle> | undefined;

/**
 * The server as `pnpm build` makes it (the tsup bundle, then its migrated PGlite template), built once for
 * the current sources into apps/server/.test-build/<hash of the sources>/ and reused by every suite that
 * starts servers until a source changes. A spawned bundle starts on less than half the CPU of the sources
 * under tsx, and a new embedded database copies the template instead of running initdb and the migrations.
 */
export const keywardServerBundle = (): Promise<ServerBundle> => {
  // Concurrent callers in one process (a setup starting two servers at once) share one build.
  building ??= buildBundle().finally(() => (building = undefined));
  return building;
};

const buildBundle = async (): Promise<ServerBundle> => {
  const name = sourceHash();
  const dir = join(buildsDir, name);
  const bundle = { main: join(dir, "main.js"), template: join(dir, "pglite-template.tar.gz") };
  if (existsSync(bundle.template)) return bundle;
  mkdirSync(buildsDir, { recursive: true });
  // Builds of other processes may run at the same time: each stages in a folder of its own.
  const staging = `${dir}.${process.pid}.${randomUUID().slice(0, 8)}`;
  await run(join(serverDir, "node_modules/.bin/tsup"), ["--out-dir", staging], { cwd: serverDir, timeout: 300_000 });
  await run(process.execPath, [join(staging, "write-template.js")], { cwd: serverDir, timeout: 300_000 });
  try {
    renameSync(staging, dir);
  } catch (error) {
    // Another suite finished the same build first.
    rmSync(staging, { recursive: true, force: true });
    if (!existsSync(bundle.template)) throw error;
  }
  // Older builds go, and so do the staging folders of processes that died building.
  for (const old of readdirSync(buildsDir)) {
    const [hash, pid] = old.split(".");
    if (pid ? !alive(Number(pid)) : hash !== name) rmSync(join(buildsDir, old), { recursive: true, force: true });
  }
  return bundle;
};
