import { globPatternError, ProjectPermissionInputSchema } from "@keyward/contract";
import { describe, expect, it } from "vitest";
import { globMatcher, globMatches } from "./glob";

describe("$glob pattern validation", () => {
  it.each([
    ["+(ab|abab)", "Glob pattern must not use extglobs or regex groups"],
    ["@(a|b)/x", "Glob pattern must not use extglobs or regex groups"],
    ["(a|aa)*b", "Glob pattern must not use extglobs or regex groups"],
    ["*a*a*a*a*b", "Glob pattern may use at most 2 wildcards in one path segment"],
    ["/x/*a*a*b", "Glob pattern may use at most 2 wildcards in one path segment"],
    ["{*a,*b}*", "Glob pattern may use at most 2 wildcards in one path segment"],
    ["*{a,ab}*", "Glob pattern may use at most 2 wildcards in one path segment"],
    ["?*?*[ab]{a,ab}{a,ab}{a,ab}", "Glob pattern may use at most 2 wildcards in one path segment"],
    ["**/a/**/b/**/c", "Glob pattern may use at most 2 globstars (**)"],
    // Each of these backtracks for 3-40 ms on a 512-character path although every segment has at most 2 wildcards.
    ["**/*a*/*a*b", "Glob pattern may use two wildcards in at most one path segment"],
    ["/*a*/*a*b", "Glob pattern may use two wildcards in at most one path segment"],
    ["**/*a*a/*a*b", "Glob pattern may use two wildcards in at most one path segment"],
    ["**/*a/**/*a*/b*", "Glob pattern may use at most 4 wildcards (each * and ** counts)"],
    ["/*/*/*/*/*", "Glob pattern may use at most 4 wildcards (each * and ** counts)"],
    [`/${"a".repeat(256)}`, "Glob pattern must be at most 256 characters"],
    ["{a,{b,c}}", "Glob pattern braces must not be nested"],
    ["{1..9}", "Glob pattern braces need 2 to 16 alternatives"],
    ["{a/b,c}", "Glob pattern braces must not contain '/'"],
    ["/a/[b", "Invalid glob pattern"],
    ["/a/b]", "Invalid glob pattern"],
    ["\\d", "Invalid glob pattern"],
    ["", "Invalid glob pattern"],
    ["!!a", "Invalid glob pattern"],
  ])("refuses %j", (pattern, message) => {
    expect(globPatternError(pattern)).toBe(message);
  });

  it.each([
    "/apps/**",
    "/dev/*",
    "*.{js,ts}",
    "*.{js,tsx}",
    "{dev,staging}-*",
    "**/a/**/b",
    "*a*",
    "/a/*/b/*/c/*/d",
    "[a-z]?x",
    "!/secret/**",
    "/x\\*y",
    "/",
    "**/*secret*/**",
    "/a/*/b/*/c/*/d/*",
  ])("accepts %j", (pattern) => {
    expect(globPatternError(pattern)).toBeUndefined();
  });

  it("refuses bad patterns inside permission rules with the validation message", () => {
    const result = ProjectPermissionInputSchema.safeParse({
      subject: "secrets",
      action: "read",
      conditions: { secretPath: { $glob: "*a*a*a*a*b" } },
    });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toBe("Glob pattern may use at most 2 wildcards in one path segment");
  });
});

describe("glob matching", () => {
  it("compiles each pattern once", () => {
    expect(globMatcher("/cache/**")).toBe(globMatcher("/cache/**"));
  });

  it("matches as the reference does: optional trailing slash, no dot files by wildcard", () => {
    expect(globMatches("/a/*", "/a/b")).toBe(true);
    expect(globMatches("/a/*", "/a/b/")).toBe(true);
    expect(globMatches("/a/*", "/a/b/c")).toBe(false);
    expect(globMatches("/a/**", "/a/b/c")).toBe(true);
    expect(globMatches("/a/**", "/a")).toBe(true);
    expect(globMatches("/a/*", "/a/.hidden")).toBe(false);
    expect(globMatches("/a/.*", "/a/.hidden")).toBe(true);
    expect(globMatches("{dev,prod}", "prod")).toBe(true);
  });
});
