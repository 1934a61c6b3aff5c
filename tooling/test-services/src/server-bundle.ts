import { execFile } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
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

/**
 * The built server: its entry, the migrated PGlite template beside it that a new data directory copies,
 * and that template unpacked (`templateDir`, a `pgdata` directory as PGlite lays it out on disk).
 */
export type ServerBundle = { main: string; template: string; templateDir: string };

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

/** How long a suite waits for another process's build of the same sources before giving up. */
const BUILD_WAIT_MS = 600_000;

/**
 * Takes the build lock of one source hash: a file created exclusively, holding its owner's pid. A lock
 * whose owner died (a suite killed mid-build) is taken over; one just created, whose pid is not written
 * yet, counts as held.
 */
const tryLock = (lock: string): boolean => {
  try {
    writeFileSync(lock, String(process.pid), { flag: "wx" });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  let owner: number;
  try {
    owner = Number(readFileSync(lock, "utf8") || NaN);
  } catch {
    return false; // released meanwhile: the next try takes it
  }
  if (Number.isInteger(owner) && !alive(owner)) rmSync(lock, { force: true });
  return false;
};

const buildBundle = async (): Promise<ServerBundle> => {
  const name = sourceHash();
  const dir = join(buildsDir, name);
  const bundle = {
    main: join(dir, "main.js"),
    template: join(dir, "pglite-template.tar.gz"),
    templateDir: join(dir, "pglite-template"),
  };
  // The unpacked template is written last: a build is complete once it exists.
  if (existsSync(bundle.templateDir)) return bundle;
  mkdirSync(buildsDir, { recursive: true });
  // The suites of one run start together and need the same build: one process builds it (~9 s of CPU),
  // the others wait for its result instead of building it again beside it.
  const lock = `${dir}.lock`;
  const waitUntil = Date.now() + BUILD_WAIT_MS;
  while (!tryLock(lock)) {
    if (existsSync(bundle.templateDir)) return bundle;
    if (Date.now() > waitUntil) throw new Error(`the server build locked by ${lock} did not finish in time`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const staging = `${dir}.${process.pid}.${randomUUID().slice(0, 8)}`;
  try {
    if (existsSync(bundle.templateDir)) return bundle;
    await run(join(serverDir, "node_modules/.bin/tsup"), ["--out-dir", staging], { cwd: serverDir, timeout: 300_000 });
    await run(process.execPath, [join(staging, "write-template.js")], { cwd: serverDir, timeout: 300_000 });
    // Unpacked once here, a test's new embedded database is a directory copy (~0.1 s) opened as it is,
    // instead of PGlite unpacking the archive into its file system at every start (~1 s of CPU more).
    const unpacked = join(staging, "pglite-template");
    mkdirSync(unpacked);
    await run("tar", ["-xzf", join(staging, "pglite-template.tar.gz"), "-C", unpacked], { timeout: 60_000 });
    // A complete build that appeared meanwhile (two waiters taking over one dead owner's lock) is kept:
    // suites may be running it. Only a build of an older layout, without the unpacked template, goes.
    if (existsSync(bundle.templateDir)) rmSync(staging, { recursive: true, force: true });
    else {
      rmSync(dir, { recursive: true, force: true });
      renameSync(staging, dir);
    }
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    throw error;
  } finally {
    rmSync(lock, { force: true });
  }
  // Older builds go, with their locks, and so do the staging folders of processes that died building.
  for (const old of readdirSync(buildsDir)) {
    const [hash, suffix] = old.split(".");
    const stale = suffix === "lock" ? hash !== name : suffix ? !alive(Number(suffix)) : hash !== name;
    if (stale) rmSync(join(buildsDir, old), { recursive: true, force: true });
  }
  return bundle;
};
