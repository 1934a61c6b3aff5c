import { execFile } from "node:child_process";
import { mkdtempSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureDebianPackages } from "../services/debian";

export const CERTMONGER = "/usr/sbin/certmonger";
export const SCEP_SUBMIT = "/usr/lib/certmonger/scep-submit";

/** certmonger (its daemon, getcert and the scep-submit helper) and a session bus to run it on. */
export const ensureCertmonger = () => {
  ensureDebianPackages(CERTMONGER, ["certmonger"]);
  ensureDebianPackages("/usr/bin/dbus-run-session", ["dbus-daemon"]);
};

export type Run = { code: number; stdout: string; stderr: string };

export const run = (file: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) =>
  new Promise<Run>((resolve) => {
    execFile(file, args, { ...options, timeout: 90_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr });
    });
  });

/**
 * A certmonger of its own (session bus, state under a fresh HOME) running `script`, a bash script
 * that drives it with `getcert -s`. The daemon ends when the script does.
 */
export const withCertmonger = async (script: (home: string) => string) => {
  const home = mkdtempSync(join(tmpdir(), "keyward-certmonger-"));
  for (const dir of ["out", "cas", "requests", "config", "tmp", "local"]) mkdirSync(join(home, dir));
  writeFileSync(join(home, "script.sh"), `set -u\ncd ${home}\n${script(home)}\n`);
  const result = await run(
    "/usr/bin/dbus-run-session",
    ["--", CERTMONGER, "-s", "-n", "-B", "-c", `/bin/bash ${join(home, "script.sh")}`],
    {
      cwd: home,
      env: {
        PATH: process.env.PATH,
        HOME: home,
        LANG: "C",
        CERTMONGER_CAS_DIR: join(home, "cas"),
        CERTMONGER_REQUESTS_DIR: join(home, "requests"),
        CERTMONGER_CONFIG_DIR: join(home, "config"),
        CERTMONGER_TMPDIR: join(home, "tmp"),
        CERTMONGER_LOCAL_CA_DIR: join(home, "local"),
      },
    },
  );
  return { ...result, home };
};

/** The files certmonger keeps for its requests (key=value lines), by request nickname. */
export const requestState = (home: string) => {
  const dir = join(home, "requests");
  const out: Record<string, Record<string, string>> = {};
  for (const file of readdirSync(dir)) {
    const fields: Record<string, string> = {};
    let last = "";
    for (const line of readFileSync(join(dir, file), "utf8").split("\n")) {
      if (line.startsWith(" ") && last) fields[last] += `\n${line.slice(1)}`;
      else if (line.includes("=")) {
        last = line.slice(0, line.indexOf("="));
        fields[last] = line.slice(line.indexOf("=") + 1);
      }
    }
    out[fields.id ?? file] = fields;
  }
  return out;
};
