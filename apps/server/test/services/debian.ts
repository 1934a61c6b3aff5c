import { ensureDebianPackage } from "@keyward/test-services";

/**
 * Make sure a Debian package's binary is present, installing it when missing (CI and fresh
 * machines run as root with the Debian mirror reachable). One helper for every service of the run,
 * so the package lists are fetched once.
 */
export const ensureDebianPackages = ensureDebianPackage;
export { freePort } from "@keyward/test-services";

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
