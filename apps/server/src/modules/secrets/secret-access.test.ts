import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { buildAbility, type PermissionRule } from "../../permissions";
import { assertMayActIn, secretObject } from "./secret-access";

const KEYS = ["ALPHA", "API_KEY", "API_URL"];
const PATHS = ["/", "/a", "/a/b"];
const ENVS = ["dev", "prod"];

const conditionArb = fc.record(
  {
    environment: fc.constantFrom<unknown>("dev", { $ne: "dev" }, { $in: ["dev", "prod"] }),
    secretPath: fc.constantFrom<unknown>("/", { $glob: "/a/**" }, { $ne: "/a" }),
    secretName: fc.constantFrom<unknown>({ $glob: "API_*" }, "ALPHA", { $ne: "ALPHA" }),
    secretTags: fc.constantFrom<unknown>({ $in: ["a"] }, { $all: ["a", "b"] }),
  },
  { requiredKeys: [] },
);

const ruleArb = fc
  .record({
    action: fc.subarray(["create", "edit", "delete"], { minLength: 1 }),
    inverted: fc.constantFrom(false, false, true),
    conditions: fc.option(conditionArb, { nil: undefined }),
  })
  .map(
    ({ action, inverted, conditions }) =>
      ({ subject: "secrets", action, inverted, ...(conditions ? { conditions } : {}) }) as PermissionRule,
  );

const tagSets = [[], ["a"], ["b"], ["a", "b"]];

describe("a folder-level secret right", () => {
  it("is never refused where some secret in that folder would be allowed, and always refused where none is allowed by any rule", () => {
    fc.assert(
      fc.property(
        fc.array(ruleArb, { maxLength: 4 }),
        fc.constantFrom<"create" | "edit" | "delete">("create", "edit", "delete"),
        fc.constantFrom(...ENVS),
        fc.constantFrom(...PATHS),
        (rules, action, environment, secretPath) => {
          const ability = buildAbility(rules);
          const someAllowed = KEYS.some((key) =>
            tagSets.some((tags) => ability.can(action, "secrets", secretObject(environment, secretPath, key, tags))),
          );
          const refused = (() => {
            try {
              assertMayActIn(ability, action, { environment, secretPath });
              return false;
            } catch {
              return true;
            }
          })();
          if (someAllowed) expect(refused).toBe(false);
          if (!rules.some((r) => !r.inverted && r.action.includes(action))) expect(refused).toBe(true);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
