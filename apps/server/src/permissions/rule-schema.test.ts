import {
  ProjectPermissionInputSchema,
  ProjectPermissionsInputSchema,
  invalidPermissionCombination,
} from "@keyward/contract";
import { describe, expect, it } from "vitest";

const parse = (rule: unknown) => ProjectPermissionInputSchema.safeParse(rule);

describe("permission rule request schema", () => {
  it("normalises to the stored form: action list, explicit inverted, conditions only when set", () => {
    expect(parse({ subject: "identity", action: "read" }).data).toEqual({
      subject: "identity",
      action: ["read"],
      inverted: false,
    });
    expect(
      parse({ subject: "secrets", action: ["read", "read"], inverted: true, conditions: { environment: "dev" } }).data,
    ).toEqual({
      subject: "secrets",
      action: ["read"],
      inverted: true,
      conditions: { environment: "dev" },
    });
    expect(parse({ subject: "role", action: ["read"], conditions: {} }).data).toEqual({
      subject: "role",
      action: ["read"],
      inverted: false,
    });
  });

  it.each([
    ["unknown subject", { subject: "nope", action: "read" }],
    ["unknown action", { subject: "secrets", action: "fly" }],
    ["action of another subject", { subject: "role", action: "readValue" }],
    ["empty action list", { subject: "secrets", action: [] }],
    ["unknown condition key", { subject: "secrets", action: "read", conditions: { enviroment: "dev" } }],
    [
      "condition on a subject without conditions",
      { subject: "role", action: "read", conditions: { environment: "dev" } },
    ],
    ["relative secret path", { subject: "secrets", action: "read", conditions: { secretPath: "app" } }],
    [
      "relative secret path in $in",
      { subject: "secrets", action: "read", conditions: { secretPath: { $in: ["/a", "b"] } } },
    ],
    [
      "operator the field does not take",
      { subject: "secret-folders", action: "read", conditions: { environment: { $glob: "d*" } } },
    ],
    ["unknown operator", { subject: "secrets", action: "read", conditions: { environment: { $regex: "d.*" } } }],
    ["empty operator object", { subject: "secrets", action: "read", conditions: { environment: {} } }],
    [
      "empty string inside an operator",
      { subject: "secrets", action: "read", conditions: { secretName: { $eq: "" } } },
    ],
    ["extglob", { subject: "secrets", action: "read", conditions: { secretPath: { $glob: "+(ab|abab)" } } }],
  ])("refuses %s", (_name, rule) => {
    expect(parse(rule).success).toBe(false);
  });

  it("accepts each subject's condition keys and operators", () => {
    expect(
      parse({
        subject: "secrets",
        action: ["describeSecret", "readValue"],
        conditions: {
          environment: { $in: ["dev", "prod"] },
          secretPath: { $glob: "/app/**" },
          secretName: { $ne: "ROOT" },
          secretTags: { $all: ["a"] },
        },
      }).success,
    ).toBe(true);
    expect(parse({ subject: "identity", action: "edit", conditions: { identityId: { $in: ["x"] } } }).success).toBe(
      true,
    );
    expect(
      parse({
        subject: "dynamic-secrets",
        action: "lease",
        conditions: { metadata: { $elemMatch: { key: "team", value: { $in: ["a"] } } } },
      }).success,
    ).toBe(true);
    expect(
      parse({ subject: "certificate-profiles", action: "issue-cert", conditions: { slug: { $glob: "web-*" } } })
        .success,
    ).toBe(true);
  });

  it("bounds the number of rules", () => {
    expect(
      ProjectPermissionsInputSchema.safeParse(Array.from({ length: 1001 }, () => ({ subject: "role", action: "read" })))
        .success,
    ).toBe(false);
  });

  it("detects the legacy read combined with its replacements", () => {
    const rules = [{ subject: "secrets", action: ["read", "readValue", "describeSecret"], inverted: false }];
    expect(invalidPermissionCombination(rules)).toMatch(
      /^You have selected Read, and both Read Value and Describe Secret\./,
    );
    expect(
      invalidPermissionCombination([{ subject: "secrets", action: ["read", "edit"], inverted: false }]),
    ).toBeUndefined();
  });
});
