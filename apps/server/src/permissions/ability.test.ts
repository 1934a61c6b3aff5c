import { describe, expect, it } from "vitest";
import { buildAbility } from "./ability";
import { missingPermissions } from "./boundary";
import { PROJECT_ROLE_RULES, orgRoleCovers } from "./built-in-roles";
import type { PermissionRule } from "./types";

const allow = (subject: string, action: string[], conditions?: PermissionRule["conditions"]): PermissionRule => ({
  subject,
  action,
  inverted: false,
  ...(conditions ? { conditions } : {}),
});
const forbid = (subject: string, action: string[], conditions?: PermissionRule["conditions"]): PermissionRule => ({
  ...allow(subject, action, conditions),
  inverted: true,
});

describe("ability", () => {
  it("lets forbid rules beat allow rules in any order", () => {
    for (const rules of [
      [allow("secrets", ["read"]), forbid("secrets", ["read"])],
      [forbid("secrets", ["read"]), allow("secrets", ["read"])],
    ]) {
      const ability = buildAbility(rules);
      expect(ability.can("read", "secrets")).toBe(false);
      expect(ability.can("read", "secrets", { environment: "dev" })).toBe(false);
    }
  });

  it("ignores conditions at type level and evaluates them at object level", () => {
    const ability = buildAbility([
      allow("secrets", ["read"], { environment: "dev" }),
      forbid("secrets", ["read"], { secretPath: { $glob: "/private/**" } }),
    ]);
    expect(ability.can("read", "secrets")).toBe(true);
    expect(ability.can("read", "secrets", { environment: "dev", secretPath: "/app" })).toBe(true);
    expect(ability.can("read", "secrets", { environment: "prod", secretPath: "/app" })).toBe(false);
    expect(ability.can("read", "secrets", { environment: "dev", secretPath: "/private/db" })).toBe(false);
    expect(ability.can("read", "secrets", { secretPath: "/app" })).toBe(false);
    expect(ability.can("edit", "secrets")).toBe(false);
  });

  it("supports $eq, $ne, $in, $all and $glob", () => {
    const ability = buildAbility([
      allow("secrets", ["read"], { environment: { $in: ["dev", "staging"] }, secretName: { $ne: "ROOT" } }),
      allow("secrets", ["edit"], { secretTags: { $all: ["a", "b"] }, environment: { $eq: "dev" } }),
      allow("secrets", ["delete"], { secretTags: { $in: ["x"] }, secretPath: { $glob: "/app/*" } }),
    ]);
    expect(ability.can("read", "secrets", { environment: "staging", secretName: "API" })).toBe(true);
    expect(ability.can("read", "secrets", { environment: "staging", secretName: "ROOT" })).toBe(false);
    expect(ability.can("read", "secrets", { environment: "prod", secretName: "API" })).toBe(false);
    expect(ability.can("edit", "secrets", { environment: "dev", secretTags: ["a", "b", "c"] })).toBe(true);
    expect(ability.can("edit", "secrets", { environment: "dev", secretTags: ["a"] })).toBe(false);
    expect(ability.can("delete", "secrets", { secretTags: ["y", "x"], secretPath: "/app/db" })).toBe(true);
    expect(ability.can("delete", "secrets", { secretTags: ["y", "x"], secretPath: "/app/db/x" })).toBe(false);
    expect(ability.can("delete", "secrets", { secretTags: [], secretPath: "/app/db" })).toBe(false);
  });

  it("lists the rules relevant to a check for 403 details", () => {
    const rule = allow("identity", ["read", "edit"], { identityId: "a" });
    expect(buildAbility([rule, allow("role", ["read"])]).rulesFor("edit", "identity")).toEqual([rule]);
  });

  it("gives the built-in admin role everything and no-access nothing", () => {
    expect(buildAbility(PROJECT_ROLE_RULES.admin!).can("grant-privileges", "identity")).toBe(true);
    expect(buildAbility(PROJECT_ROLE_RULES["no-access"]!).can("read", "secrets")).toBe(false);
    expect(buildAbility(PROJECT_ROLE_RULES.member!).can("grant-privileges", "identity")).toBe(false);
    expect(buildAbility(PROJECT_ROLE_RULES.viewer!).can("edit", "secrets")).toBe(false);
  });

  it("orders the built-in project roles admin > member > viewer > no-access", () => {
    const roles = ["admin", "member", "viewer", "no-access"].map((slug) => PROJECT_ROLE_RULES[slug]!);
    for (let i = 0; i < roles.length - 1; i++) {
      expect(missingPermissions(buildAbility(roles[i]!), roles[i + 1]!)).toEqual([]);
      expect(missingPermissions(buildAbility(roles[i + 1]!), roles[i]!).length).toBeGreaterThan(0);
    }
  });

  it("ranks org roles through the boundary check", () => {
    expect(orgRoleCovers("admin", "member")).toBe(true);
    expect(orgRoleCovers("member", "member")).toBe(true);
    expect(orgRoleCovers("member", "admin")).toBe(false);
    expect(orgRoleCovers("no-access", "member")).toBe(false);
    expect(orgRoleCovers("admin", "unknown")).toBe(false);
  });
});
