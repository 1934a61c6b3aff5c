import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { startBareTestApp, type BareTestApp } from "../helpers/app";

const run = promisify(execFile);
const root = fileURLToPath(new URL("../../../../", import.meta.url));

/** The README's quick-start blocks, in order: ```<language> quickstart fences. */
const quickStartBlocks = () =>
  [...readFileSync(join(root, "README.md"), "utf8").matchAll(/```(\w+) quickstart\n([\s\S]*?)```/g)].map((m) => ({
    language: m[1]!,
    code: m[2]!,
  }));

let app: BareTestApp | undefined;
const scratch = mkdtempSync(join(tmpdir(), "keyward-quickstart-"));
afterAll(async () => {
  await app?.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** What the reader's shell holds: a server's address, and no token or profile of the test's own. */
const readerEnv = (baseUrl: string) => {
  // The reader's shell is not inside a pnpm run: no npm_* variables steer npm or pnpm there.
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));
  const { DATABASE_URL: _suiteDatabase, ...env } = inherited;
  return { ...env, KEYWARD_URL: baseUrl, XDG_CONFIG_HOME: join(scratch, "config"), KEYWARD_TOKEN: "" };
};

// pack:dist builds the client and the CLI, npm installs their tarballs: minutes on a loaded machine.
describe("the README quick start, run as written against a fresh server", { timeout: 900_000 }, () => {
  it("reaches a secret with curl, the installed keyward command line and @keyward/client under plain node", async () => {
    app = await startBareTestApp();
    const blocks = quickStartBlocks();
    expect(blocks.map((b) => b.language)).toEqual(["sh", "sh", "sh", "js"]);
    const shell = blocks.filter((b) => b.language === "sh").map((b) => b.code);
    // The service's folder is new and outside the repository, as a reader's would be.
    const serviceDir = join(scratch, "service");
    const script = join(scratch, "quickstart.sh");
    // One POSIX shell for the blocks, started at the repository root as a reader pastes them; the
    // variables they export are printed last for step 4.
    writeFileSync(script, `set -eu\n${shell.join("\n")}\nenv > "${join(scratch, "env")}"\n`);
    const env = { ...readerEnv(app.baseUrl), SERVICE_DIR: serviceDir };
    const shellRun = await run("sh", [script], { cwd: root, env, timeout: 840_000, maxBuffer: 64 * 1024 * 1024 }).catch(
      (error: { stdout?: string; stderr?: string; message: string }) => {
        throw new Error(`the quick start's shell blocks failed: ${error.message}\n${error.stdout}\n${error.stderr}`);
      },
    );
    const lines = shellRun.stdout.trim().split("\n");
    expect(lines).toContain("s3cr3t");
    expect(lines).toContain("GREETING=hello");
    expect(lines).toContain("DB_PASSWORD=s3cr3t");

    const exported = Object.fromEntries(
      readFileSync(join(scratch, "env"), "utf8")
        .split("\n")
        .filter((entry) => /^[A-Za-z_][A-Za-z0-9_]*=/.test(entry))
        .map((entry) => [entry.slice(0, entry.indexOf("=")), entry.slice(entry.indexOf("=") + 1)]),
    );
    expect(exported.SERVICE_DIR).toBe(serviceDir);
    // Step 4 as written: the file saved in the service's folder, run by plain node (no loader, no repository).
    writeFileSync(join(serviceDir, "read-secret.mjs"), blocks.find((b) => b.language === "js")!.code);
    const node = await run("node", ["read-secret.mjs"], { cwd: serviceDir, env: exported, timeout: 60_000 });
    expect(node.stdout.trim()).toBe("GREETING=hello");
  });

  it("run again on the instance now set up, step 1 stops with the server's message", async () => {
    expect(app).toBeDefined();
    const again = join(scratch, "again");
    mkdirSync(again);
    const script = join(again, "step1.sh");
    writeFileSync(script, `set -eu\n${quickStartBlocks()[0]!.code}`);
    const failed = await run("sh", [script], { cwd: again, env: readerEnv(app!.baseUrl), timeout: 60_000 }).then(
      () => undefined,
      (error: { code?: number; stderr?: string }) => error,
    );
    expect(failed?.code).not.toBe(0);
    expect(failed?.stderr).toMatch(/^400 BadRequest: Instance has already been set up: use the admin token/m);
    expect(failed?.stderr).not.toContain("SyntaxError");
  });
});
