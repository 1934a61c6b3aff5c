import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:net";

let aptUpdated = false;

/** Install a Debian package when its binary is missing (CI and fresh machines run as root). */
export const ensureDebianPackage = (binary: string, packages: string[]) => {
  if (existsSync(binary)) return;
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  if (!aptUpdated) {
    execFileSync("apt-get", ["update", "-qq"], { stdio: "ignore", env, timeout: 300_000 });
    aptUpdated = true;
  }
  execFileSync("apt-get", ["install", "-y", "-qq", "--no-install-recommends", ...packages], {
    stdio: "ignore",
    env,
    timeout: 600_000,
  });
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
