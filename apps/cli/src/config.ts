import { chmodSync, statSync, closeSync, lstatSync, mkdirSync, openSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "./agent/files";
import { cliEnv } from "./env";

/** What `keyward login` stores: enough to call the API and to renew or log in again. */
export type Profile = {
  url: string;
  /** The bearer: an identity's access token, or a person's session access token (a JWT). */
  token: string;
  /** "user": a person signed in through the browser; the session renews with `refreshToken`. */
  method: "universal-auth" | "token" | "user";
  clientId?: string;
  /** A person's e-mail and organization slug, and the session's refresh token (it rotates on every use). */
  email?: string;
  organization?: string;
  refreshToken?: string;
  loggedInAt: string;
};

const profilePath = () => join(cliEnv().configDir, "profile.json");

export const readProfile = (): Profile | undefined => {
  try {
    return JSON.parse(readFileSync(profilePath(), "utf8")) as Profile;
  } catch {
    return undefined;
  }
};

/** Our own config folder (a directory, not a link, owned by this user) is closed to others. */
const closeOwnFolder = (dir: string) => {
  const stat = lstatSync(dir);
  if (stat.isDirectory() && stat.uid === process.getuid?.() && (stat.mode & 0o077) !== 0) chmodSync(dir, 0o700);
};

/** The profile file's own entry, without following a link; undefined when there is none. */
const entryOf = (path: string) => {
  try {
    return lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
};

/**
 * Written with mode 0600 in a 0700 folder: the file holds a bearer token. It is a new file, created
 * exclusively beside the profile and renamed over it, so the token never goes through a link or
 * into a file someone else opened; a profile.json that is a symbolic link is refused, not followed.
 */
export const writeProfile = (profile: Profile) => {
  const dir = cliEnv().configDir;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  closeOwnFolder(dir);
  const path = profilePath();
  if (entryOf(path)?.isSymbolicLink()) {
    throw new CliError(`${path} is a symbolic link; remove it (or replace it with a regular file) and log in again`);
  }
  writeFileAtomic(path, `${JSON.stringify(profile, null, 2)}\n`, 0o600);
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A lock older than this was left by a keyward that died; it is taken over. */
const STALE_LOCK_MS = 30_000;

/**
 * Run `work` while holding the profile's lock (a file created exclusively beside it), so two
 * keyward processes never renew a session with the same refresh token: a refresh token used twice
 * ends the whole session. Whoever waits re-reads the profile once it holds the lock.
 */
export const withProfileLock = async <T>(work: () => Promise<T>): Promise<T> => {
  const dir = cliEnv().configDir;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const lock = join(dir, "profile.json.lock");
  const deadline = Date.now() + 2 * STALE_LOCK_MS;
  for (;;) {
    try {
      closeSync(openSync(lock, "wx", 0o600));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      try {
        if (Date.now() - statSync(lock).mtimeMs > STALE_LOCK_MS) rmSync(lock, { force: true });
      } catch {
        // It went away meanwhile.
      }
      if (Date.now() > deadline) throw new CliError(`Another keyward holds ${lock}; remove it if none is running`);
      await sleep(50 + Math.random() * 100);
    }
  }
  try {
    return await work();
  } finally {
    rmSync(lock, { force: true });
  }
};

export const removeProfile = () => {
  const existed = readProfile() !== undefined;
  rmSync(profilePath(), { force: true });
  return existed;
};

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** fetch reports a refused connection, an unknown host or a bad URL as a TypeError whose cause says which. */
export const unreachable = (url: string, error: TypeError) => {
  const cause = error.cause instanceof Error ? error.cause.message : undefined;
  return new CliError(`Cannot reach Keyward at ${url}: ${cause ?? error.message}`);
};

/**
 * The server's base URL as given (KEYWARD_URL, --url or the profile), checked: an http(s) URL must
 * have no path (the client adds `/api/v…` itself, so `…/api` would ask for `/api/api/v…` and get the
 * console's page), query or fragment; trailing slashes are dropped. Anything else is passed on as
 * given, and the request names it when it cannot reach it. `from` names where the URL came from.
 */
export const baseUrlOf = (given: string, from = "KEYWARD_URL") => {
  let parsed: URL;
  try {
    parsed = new URL(given);
  } catch {
    return given;
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return given;
  const wrong = (why: string) =>
    new CliError(
      `${from} must be the server's base URL without a path, like http://127.0.0.1:8080 (got ${given}: ${why})`,
    );
  if (parsed.username || parsed.password) throw wrong("it holds a user name or password");
  if (parsed.search || parsed.hash || given.includes("?") || given.includes("#"))
    throw wrong("it has a query or fragment");
  if (parsed.pathname.replace(/\/+$/, "") !== "") throw wrong(`it has the path ${parsed.pathname}`);
  return parsed.origin;
};

/** KEYWARD_URL and KEYWARD_TOKEN win over the stored profile. */
export const resolveConnection = (needToken = true) => {
  const env = cliEnv();
  const profile = readProfile();
  const url =
    env.url !== undefined
      ? baseUrlOf(env.url)
      : profile?.url !== undefined
        ? baseUrlOf(profile.url, "The stored profile's url")
        : undefined;
  const token = env.token ?? profile?.token;
  if (!url) throw new CliError("No Keyward URL: set KEYWARD_URL or run `keyward login --url URL …`");
  if (needToken && !token) throw new CliError("Not logged in: set KEYWARD_TOKEN or run `keyward login`");
  return { url, token, profile, tokenSource: env.token ? "KEYWARD_TOKEN" : profile ? "profile" : "none" };
};
