import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cliEnv } from "./env";

/** What `keyward login` stores: enough to call the API and to renew or log in again. */
export type Profile = {
  url: string;
  token: string;
  method: "universal-auth" | "token";
  clientId?: string;
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

/** Written with mode 0600 in a 0700 folder: the file holds a bearer token. */
export const writeProfile = (profile: Profile) => {
  const dir = cliEnv().configDir;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(profilePath(), `${JSON.stringify(profile, null, 2)}\n`, { mode: 0o600 });
  chmodSync(profilePath(), 0o600);
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

/** KEYWARD_URL and KEYWARD_TOKEN win over the stored profile. */
export const resolveConnection = (needToken = true) => {
  const env = cliEnv();
  const profile = readProfile();
  const url = env.url ?? profile?.url;
  const token = env.token ?? profile?.token;
  if (!url) throw new CliError("No Keyward URL: set KEYWARD_URL or run `keyward login --url URL …`");
  if (needToken && !token) throw new CliError("Not logged in: set KEYWARD_TOKEN or run `keyward login`");
  return { url, token, profile, tokenSource: env.token ? "KEYWARD_TOKEN" : profile ? "profile" : "none" };
};
