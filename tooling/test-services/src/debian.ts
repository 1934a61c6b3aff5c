import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:net";

/**
 * One apt run at a time across the run's processes: apt-get fails at once when another holds the
 * package lists' lock, and a process that waited should find its binary rather than install again.
 */
const APT_LOCK = "/tmp/keyward-apt.lock";

/**
 * Install Debian packages when `binary` is missing (CI and fresh machines run as root): one install at
 * a time under APT_LOCK, the binary looked for again once it is held, the package lists fetched only
 * when an install fails without them.
 */
export const ensureDebianPackage = (binary: string, packages: string[]) => {
  if (existsSync(binary)) return;
  // DPkg::Lock::Timeout makes an install wait for dpkg run by anything else on the machine.
  const install = [
    `test -e "$1" && exit 0`,
    "shift",
    `apt_install() { apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=600 "$@"; }`,
    `apt_install "$@" || { apt-get update -qq && apt_install "$@"; }`,
  ].join("\n");
  execFileSync("flock", [APT_LOCK, "sh", "-ec", install, "sh", binary, ...packages], {
    stdio: "ignore",
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    timeout: 900_000,
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
