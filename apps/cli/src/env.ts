import { homedir } from "node:os";
import { join } from "node:path";

/** The only reader of process.env in the CLI. */
export const cliEnv = () => ({
  url: process.env.KEYWARD_URL || undefined,
  token: process.env.KEYWARD_TOKEN || undefined,
  configDir: join(process.env.XDG_CONFIG_HOME || join(homedir(), ".config"), "keyward"),
});

/** The environment a `keyward run` child starts from. */
export const parentEnvironment = (): Record<string, string | undefined> => ({ ...process.env });
