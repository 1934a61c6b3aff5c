import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { buildAbility, type PermissionRule } from "../../src/permissions";
import { createFolder, createSecretsScope, identityWithRules } from "./helpers";

const KEYS = ["ALPHA", "BETA", "API_KEY", "API_URL"];
const PATHS = ["/", "/a", "/a/b"];

const conditionArb = fc.oneof(
  fc.constant(undefined),
  fc.record({ secretName: fc.subarray(KEYS, { minLength: 1 }).map(($in) => ({ $in })) }),
  fc.record({ secretName: fc.constantFrom({ $glob: "API_*" }, "ALPHA") }),
  fc.record({ secretPath: fc.constantFrom("/", "/a", { $glob: "/a/**" }, { $ne: "/a" }) }),
  fc.record({
    environment: fc.constantFrom("dev", "prod"),
    secretName: fc.constantFrom({ $ne: "BETA" }, { $glob: "*_URL" }),
  }),
);

const ruleArb: fc.Arbitrary<PermissionRule> = fc
  .record({
    action: fc.subarray(["describeSecret", "readValue", "read"], { minLength: 1 }),
    inverted: fc.constantFrom(false, false, true),
    conditions: conditionArb,
  })
  .map(({ action, inverted, conditions }) => ({
    subject: "secrets",
    action,
    inverted,
    ...(conditions ? { conditions: conditions } : {}),
  }));

/** Which (path, key) pairs exist: every path gets a random subset of the keys. */
const treeArb = fc.tuple(...PATHS.map(() => fc.subarray(KEYS)));

const can = (rules: PermissionRule[], actions: string[], path: string, key: string) => {
  const ability = buildAbility(rules);
  const object = { environment: "dev", secretPath: path, secretName: key, secretTags: [] };
  return actions.some((a) => ability.can(a, "secrets", object));
};

describe("secret lists honour every permission rule", () => {
  it("never return a denied secret or value, and always return the allowed ones", async () => {
    const scope = await createSecretsScope();
    const { tenant, projectId, http } = scope;
    await createFolder(tenant, projectId, "dev", "/", "a");
    await createFolder(tenant, projectId, "dev", "/a", "b");
    await fc.assert(
      fc.asyncProperty(fc.array(ruleArb, { minLength: 0, maxLength: 4 }), treeArb, async (rules, tree) => {
        // One tree per run: clear the folders, then write this run's secrets.
        await tenant.app.deps.db
          .deleteFrom("secrets")
          .where("folder_id", "in", (eb) =>
            eb
              .selectFrom("secret_folders as f")
              .innerJoin("environments as e", "e.id", "f.env_id")
              .select("f.id")
              .where("e.project_id", "=", projectId),
          )
          .execute();
        for (const [i, path] of PATHS.entries()) {
          const keys = tree[i]!;
          if (keys.length === 0) continue;
          const res = await http.post("/api/v4/secrets/batch", {
            projectId,
            environment: "dev",
            secretPath: path,
            secrets: keys.map((k) => ({ secretKey: k, secretValue: `${path}:${k}` })),
          });
          expect(res.status).toBe(200);
        }
        const reader = await identityWithRules(scope, rules);
        const describeAny = buildAbility(rules);
        const list = await reader.http.get("/api/v3/secrets/raw", {
          workspaceId: projectId,
          environment: "dev",
          recursive: "true",
        });
        const present = PATHS.flatMap((p, i) => tree[i]!.map((k) => ({ path: p, key: k })));
        const describable = present.filter((s) => can(rules, ["describeSecret", "read"], s.path, s.key));
        const readable = describable.filter((s) => can(rules, ["readValue", "read"], s.path, s.key));
        if (!describeAny.can("describeSecret", "secrets") && !describeAny.can("read", "secrets")) {
          expect(list.status).toBe(403);
          return;
        }
        if (describable.some((s) => s.path === "/" && !readable.includes(s))) {
          expect(list.status).toBe(403);
          return;
        }
        expect(list.status).toBe(200);
        const got = (list.body.secrets as { secretPath: string; secretKey: string; secretValue: string }[])
          .map((s) => `${s.secretPath}|${s.secretKey}|${s.secretValue}`)
          .sort();
        expect(got).toEqual(readable.map((s) => `${s.path}|${s.key}|${s.path}:${s.key}`).sort());
        const masked = await reader.http.get("/api/v3/secrets/raw", {
          workspaceId: projectId,
          environment: "dev",
          recursive: "true",
          viewSecretValue: "false",
        });
        expect(masked.status).toBe(200);
        const maskedGot = (masked.body.secrets as { secretPath: string; secretKey: string; secretValue: string }[])
          .map((s) => `${s.secretPath}|${s.secretKey}|${s.secretValue}`)
          .sort();
        expect(maskedGot).toEqual(describable.map((s) => `${s.path}|${s.key}|<hidden-by-infisical>`).sort());
      }),
      { numRuns: 25 },
    );
  }, 240_000);
});
