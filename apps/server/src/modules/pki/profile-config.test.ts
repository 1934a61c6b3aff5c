import { describe, expect, it } from "vitest";
import { newEabSecret } from "./profile-config";

describe("ACME external account binding key shape", () => {
  it("is 32 random bytes in base64url that a command line never reads as an option", () => {
    // One key in 64 would start with "-" if the generator did not skip those; 4,000 draws miss that with p < 1e-27.
    const keys = Array.from({ length: 4000 }, () => newEabSecret());
    for (const key of keys) {
      expect(key.startsWith("-")).toBe(false);
      expect(Buffer.from(key, "base64url")).toHaveLength(32);
    }
    expect(new Set(keys).size).toBe(keys.length);
  });
});
