import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { startBareTestApp, type BareTestApp } from "../helpers/app";

const run = promisify(execFile);
const root = fileURLToPath(new URL("../../../../", import.meta.url));
const serverDir = fileURLToPath(new URL("../../", import.meta.url));

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

// Each keyward command starts from source; on a loaded machine the three take a while.
describe("the README quick start, run as written against a fresh server", { timeout: 240_000 }, () => {
  it("reaches a secret with curl, the keyward command line and @keyward/client", async () => {
    app = await startBareTestApp();
    const blocks = quickStartBlocks();
    expect(blocks.map((b) => b.language)).toEqual(["sh", "sh", "js"]);
    const shell = blocks.filter((b) => b.language === "sh").map((b) => b.code);
    const script = join(scratch, "quickstart.sh");
    // One shell for the blocks, as a reader pastes them; the variables they export are printed last for step 3.
    writeFileSync(script, `set -euo pipefail\n${shell.join("\n")}\nenv -0 > "${join(scratch, "env")}"\n`);
    const env = {
      ...process.env,
      KEYWARD_URL: app.baseUrl,
      XDG_CONFIG_HOME: join(scratch, "config"),
      KEYWARD_TOKEN: "",
    };
    const shellRun = await run("bash", [script], { cwd: root, env, timeout: 240_000 });
    const lines = shellRun.stdout.trim().split("\n");
    expect(lines).toContain("s3cr3t");
    expect(lines).toContain("GREETING=hello");
    expect(lines).toContain("DB_PASSWORD=s3cr3t");

    const exported = Object.fromEntries(
      readFileSync(join(scratch, "env"), "utf8")
        .split("\0")
        .filter((entry) => entry.includes("="))
        .map((entry) => [entry.slice(0, entry.indexOf("=")), entry.slice(entry.indexOf("=") + 1)]),
    );
    // Saved where the client is installed: this package depends on it.
    const file = join(serverDir, `.read-secret-${process.pid}.mjs`);
    writeFileSync(file, blocks.find((b) => b.language === "js")!.code);
    try {
      const node = await run(process.execPath, ["--import", "tsx", file], {
        cwd: serverDir,
        env: { ...process.env, ...exported },
        timeout: 60_000,
      });
      expect(node.stdout.trim()).toBe("GREETING=hello");
    } finally {
      rmSync(file, { force: true });
    }
  });
});
