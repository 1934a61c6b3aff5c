import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { buildAbility } from "./ability";
import { missingPermissions } from "./boundary";
import type { ConditionValue, Conditions, PermissionObject, PermissionRule } from "./types";

const rule = (subject: string, action: string[], conditions?: Conditions, inverted = false): PermissionRule => ({
  subject,
  action,
  inverted,
  ...(conditions ? { conditions } : {}),
});

describe("permission boundary", () => {
  it("lists what the holder lacks, with the granted conditions", () => {
    const holder = buildAbility([rule("secrets", ["read"], { environment: "dev" })]);
    expect(missingPermissions(holder, [rule("secrets", ["read", "edit"], { environment: "dev" })])).toEqual([
      { action: "edit", subject: "secrets" },
    ]);
    expect(missingPermissions(holder, [rule("secrets", ["read"], { environment: "prod" })])).toEqual([
      { action: "read", subject: "secrets", conditions: { environment: "prod" } },
    ]);
    expect(missingPermissions(holder, [rule("secrets", ["read"])])).toEqual([{ action: "read", subject: "secrets" }]);
  });

  it("accepts narrower conditions, glob within glob, and forbid rules", () => {
    const holder = buildAbility([
      rule("secrets", ["read"], { environment: { $in: ["dev", "prod"] }, secretPath: { $glob: "/app/**" } }),
    ]);
    expect(
      missingPermissions(holder, [
        rule("secrets", ["read"], { environment: "dev", secretPath: { $glob: "/app/web/*" } }),
      ]),
    ).toEqual([]);
    expect(
      missingPermissions(holder, [rule("secrets", ["read"], { environment: "dev", secretPath: "/app/db" })]),
    ).toEqual([]);
    expect(
      missingPermissions(holder, [rule("secrets", ["read"], { environment: "dev", secretPath: { $glob: "/**" } })]),
    ).toHaveLength(1);
    expect(missingPermissions(holder, [rule("identity", ["delete"], undefined, true)])).toEqual([]);
  });

  it("refuses a grant overlapping the holder's forbid rules unless the grant forbids the same ground", () => {
    const holder = buildAbility([rule("secrets", ["read"]), rule("secrets", ["read"], { environment: "prod" }, true)]);
    expect(missingPermissions(holder, [rule("secrets", ["read"])])).toHaveLength(1);
    expect(missingPermissions(holder, [rule("secrets", ["read"], { environment: "dev" })])).toEqual([]);
    expect(
      missingPermissions(holder, [rule("secrets", ["read"]), rule("secrets", ["read"], { environment: "prod" }, true)]),
    ).toEqual([]);
  });

  it("exempts reading folders", () => {
    expect(missingPermissions(buildAbility([]), [rule("secret-folders", ["read"])])).toEqual([]);
  });
});

// ---- property: every grant the check accepts is within the holder's ability ----

const ENVS = ["dev", "prod", "stg"];
const PATHS = ["/", "/a", "/a/b", "/a/c", "/b", "/bb", "/a/b/c"];
const GLOBS = ["/a/**", "/**", "/a/*", "/b*", "/{a,b}", "/a/?"];
const TAGS = ["t1", "t2", "t3"];

const scalarCondition = (values: string[], globs: string[]): fc.Arbitrary<ConditionValue> =>
  fc.oneof(
    fc.constantFrom(...values),
    fc.constantFrom(...values).map(($eq) => ({ $eq })),
    fc.constantFrom(...values).map(($ne) => ({ $ne })),
    fc.subarray(values).map(($in) => ({ $in })),
    ...(globs.length ? [fc.constantFrom(...globs).map(($glob) => ({ $glob }))] : []),
  );
const tagCondition: fc.Arbitrary<ConditionValue> = fc.oneof(
  fc.subarray(TAGS).map(($in) => ({ $in })),
  fc.subarray(TAGS, { minLength: 1 }).map(($all) => ({ $all })),
);
const secretConditions = fc.record(
  {
    environment: scalarCondition(ENVS, ["d*", "{dev,stg}"]),
    secretPath: scalarCondition(PATHS, GLOBS),
    secretTags: tagCondition,
  },
  { requiredKeys: [] },
);
const identityConditions = fc.record({ identityId: scalarCondition(["i1", "i2", "i3"], []) }, { requiredKeys: [] });

const arbRule: fc.Arbitrary<PermissionRule> = fc
  .oneof(
    fc.record({
      subject: fc.constant("secrets"),
      action: fc.subarray(["read", "edit", "create"], { minLength: 1 }),
      inverted: fc.boolean(),
      conditions: fc.option(secretConditions, { nil: undefined }),
    }),
    fc.record({
      subject: fc.constant("identity"),
      action: fc.subarray(["read", "edit"], { minLength: 1 }),
      inverted: fc.boolean(),
      conditions: fc.option(identityConditions, { nil: undefined }),
    }),
  )
  .map((r) =>
    r.conditions && Object.keys(r.conditions).length > 0
      ? r
      : { subject: r.subject, action: r.action, inverted: r.inverted },
  );

const secretObjects: PermissionObject[] = [];
for (const environment of [...ENVS, undefined]) {
  for (const secretPath of [...PATHS, undefined]) {
    for (const secretTags of [[], ["t1"], ["t1", "t2"], ["t3"], ["t1", "t2", "t3"]])
      secretObjects.push({ environment, secretPath, secretTags });
  }
}
const identityObjects: PermissionObject[] = ["i1", "i2", "i3", "i4", undefined].map((identityId) => ({ identityId }));
const CHECKS: [string, string, PermissionObject[]][] = [
  ...["read", "edit", "create"].map((a): [string, string, PermissionObject[]] => ["secrets", a, secretObjects]),
  ...["read", "edit"].map((a): [string, string, PermissionObject[]] => ["identity", a, identityObjects]),
];

describe("permission boundary, property", () => {
  it("accepts only grants that are a subset of the holder's ability", () => {
    let accepted = 0;
    fc.assert(
      fc.property(
        fc.array(arbRule, { maxLength: 6 }),
        fc.array(arbRule, { minLength: 1, maxLength: 4 }),
        (held, granted) => {
          const holder = buildAbility(held);
          if (missingPermissions(holder, granted).length > 0) return;
          if (granted.some((r) => !r.inverted)) accepted++;
          const grant = buildAbility(granted);
          for (const [subject, action, objects] of CHECKS) {
            if (grant.can(action, subject)) expect(holder.can(action, subject)).toBe(true);
            for (const object of objects) {
              if (grant.can(action, subject, object))
                expect(holder.can(action, subject, object), JSON.stringify({ held, granted, object })).toBe(true);
            }
          }
        },
      ),
      { numRuns: 4000 },
    );
    expect(accepted).toBeGreaterThan(100);
  });

  it("accepts a holder's own allow rules", () => {
    fc.assert(
      fc.property(fc.array(arbRule, { minLength: 1, maxLength: 6 }), (held) => {
        expect(missingPermissions(buildAbility(held), held)).toEqual([]);
      }),
    );
  });
});
