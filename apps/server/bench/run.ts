import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";

/** Runs every bench/*.bench.ts in turn (or only those named on the command line). */
const dir = new URL(".", import.meta.url).pathname;
const wanted = process.argv.slice(2);
const files = readdirSync(dir)
  .filter((f) => f.endsWith(".bench.ts"))
  .filter((f) => wanted.length === 0 || wanted.some((w) => f.includes(w)))
  .sort();
let failed = false;
for (const file of files) {
  console.log(`\n=== ${file}`);
  const result = spawnSync(process.execPath, ["--import", "tsx", `${dir}${file}`], {
    stdio: "inherit",
    cwd: new URL("..", import.meta.url).pathname,
  });
  if (result.status !== 0) failed = true;
}
process.exit(failed ? 1 : 0);
