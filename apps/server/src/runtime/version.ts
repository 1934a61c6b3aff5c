import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The server package's version, found beside the sources or the built bundle (dist/, .test-build/<hash>/). */
export const keywardVersion = (): string => {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 5; depth += 1) {
    const file = join(dir, "package.json");
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, "utf8")) as { name?: string; version?: string };
      if (pkg.name === "@keyward/server" && pkg.version) return pkg.version;
    }
    dir = dirname(dir);
  }
  return "unknown";
};
