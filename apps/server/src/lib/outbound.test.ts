import { describe, expect, it } from "vitest";
import { BadRequestError } from "../errors";
import { isAddressAllowed, resolveOutboundTarget } from "./outbound";

const schemes = ["https:", "http:"] as const;

describe("outbound safety", () => {
  it("always refuses metadata, link-local and unspecified addresses", () => {
    for (const address of [
      "169.254.169.254",
      "fe80::1",
      "100.100.100.200",
      "fd00:ec2::254",
      "0.0.0.0",
      "::ffff:169.254.169.254",
      "224.0.0.1",
    ]) {
      expect(isAddressAllowed(address, "private")).toBe(false);
    }
  });

  it("allows loopback and private ranges only when configured", () => {
    expect(isAddressAllowed("127.0.0.1", "none")).toBe(false);
    expect(isAddressAllowed("::1", "none")).toBe(false);
    expect(isAddressAllowed("127.0.0.1", "loopback")).toBe(true);
    expect(isAddressAllowed("10.0.0.8", "loopback")).toBe(false);
    expect(isAddressAllowed("192.168.1.1", "private")).toBe(true);
    expect(isAddressAllowed("fd12::1", "private")).toBe(true);
    expect(isAddressAllowed("8.8.8.8", "none")).toBe(true);
  });

  it("checks scheme and credentials, and pins the resolved address", async () => {
    await expect(resolveOutboundTarget("ftp://127.0.0.1/x", { schemes, policy: "loopback" })).rejects.toThrow(
      BadRequestError,
    );
    await expect(resolveOutboundTarget("http://user:pw@127.0.0.1/", { schemes, policy: "loopback" })).rejects.toThrow(
      "URLs with user credentials (e.g., user:pass@) are not allowed",
    );
    await expect(resolveOutboundTarget("http://127.0.0.1:8080/", { schemes, policy: "none" })).rejects.toThrow(
      "Local IPs not allowed as URL",
    );
    await expect(resolveOutboundTarget("http://localhost:8080/", { schemes, policy: "none" })).rejects.toThrow(
      "Local IPs not allowed as URL",
    );
    await expect(resolveOutboundTarget("http://not-a-host.invalid/", { schemes, policy: "private" })).rejects.toThrow(
      "Could not resolve hostname to any IP address",
    );
    const target = await resolveOutboundTarget("http://localhost:8080/path", { schemes, policy: "loopback" });
    expect(target).toMatchObject({ hostname: "localhost", port: 8080 });
    expect(["127.0.0.1", "::1"]).toContain(target.address);
    const ldaps = await resolveOutboundTarget("ldaps://[::1]", { schemes: ["ldaps:"], policy: "loopback" });
    expect(ldaps).toMatchObject({ address: "::1", family: 6, port: 636 });
  });
});
