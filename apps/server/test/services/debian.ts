import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:net";

let updated = false;

/**
 * Make sure a Debian package's binary is present, installing it when missing (CI and fresh
 * machines run as root with the Debian mirror reachable).
 */
export const ensureDebianPackages = (binary: string, packages: string[]) => {
  if (existsSync(binary)) return;
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  if (!updated) {
    execFileSync("apt-get", ["update", "-qq"], { stdio: "ignore", env });
    updated = true;
  }
  execFileSync("apt-get", ["install", "-y", "-qq", "--no-install-recommends", ...packages], { stdio: "ignore", env });
  if (!existsSync(binary)) throw new Error(`installing ${packages.join(" ")} did not provide ${binary}`);
};

/** A TCP port nobody listens on right now, on loopback. */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });

/** Poll until `check` resolves true, or fail after the timeout. */
export const waitFor = async (what: string, check: () => Promise<boolean> | boolean, timeoutMs = 30_000) => {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if (await check()) return;
    } catch {
      // not yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
};
