import { homedir } from "node:os";
import { join } from "node:path";

/** The only reader of process.env in the CLI. */
export const cliEnv = () => ({
  url: process.env.KEYWARD_URL || undefined,
  token: process.env.KEYWARD_TOKEN || undefined,
  /** The program that opens the sign-in page (given the URL); "none" only prints it. */
  browser: process.env.KEYWARD_BROWSER || undefined,
  /** How long `keyward login` waits for the browser, in seconds (default 600). */
  loginTimeoutSeconds:
    Number(process.env.KEYWARD_LOGIN_TIMEOUT_S) > 0 ? Number(process.env.KEYWARD_LOGIN_TIMEOUT_S) : 600,
  configDir: join(process.env.XDG_CONFIG_HOME || join(homedir(), ".config"), "keyward"),
});

/** The environment a `keyward run` child starts from. */
export const parentEnvironment = (): Record<string, string | undefined> => ({ ...process.env });
