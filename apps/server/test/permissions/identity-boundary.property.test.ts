import type { ProjectPermissionRule } from "@keyward/contract";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PROJECT_ROLE_RULES, buildAbility, missingPermissions, type PermissionRule } from "../../src/permissions";
import { grant } from "./helpers";
import { createIdentity, createProject, createTenant, expectOk, type TestIdentity } from "../helpers/tenant";

const TARGET_ROLES = ["no-access", "viewer", "member", "admin"] as const;
type TargetRole = (typeof TARGET_ROLES)[number];

/**
 * The caller: an org admin who is a built-in member of the project and may also do everything to
 * identities there, so only the boundary stands between it and the project admins.
 */
const IDENTITY_RULE = {
  subject: "identity",
  action: ["read", "create", "edit", "delete", "revoke-auth", "create-token", "get-token", "delete-token"],
} satisfies ProjectPermissionRule;
const MANAGER_RULES: PermissionRule[] = [...PROJECT_ROLE_RULES.member!, { ...IDENTITY_RULE, inverted: false }];

type Op =
  | { kind: "mint"; target: number }
  | { kind: "client-secret"; target: number }
  | { kind: "set-role"; target: number; role: TargetRole }
  | { kind: "set-metadata"; target: number; value: string };

const opArb = (targets: number): fc.Arbitrary<Op> => {
  const target = fc.nat({ max: targets - 1 });
  return fc.oneof(
    fc.record({ kind: fc.constant("mint" as const), target }),
    fc.record({ kind: fc.constant("client-secret" as const), target }),
    fc.record({ kind: fc.constant("set-role" as const), target, role: fc.constantFrom(...TARGET_ROLES) }),
    fc.record({ kind: fc.constant("set-metadata" as const), target, value: fc.constantFrom("a", "b") }),
  );
};

describe("identity operations by a limited caller (property)", () => {
  it("never end with the caller holding a credential of an identity that exceeds it", async () => {
    const targetCount = 3;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom(...TARGET_ROLES), { minLength: targetCount, maxLength: targetCount }),
        fc.array(opArb(targetCount), { minLength: 1, maxLength: 6 }),
        async (initialRoles, ops) => {
          const tenant = await createTenant();
          const project = await createProject(tenant);
          const actor = await createIdentity(tenant, {
            orgRole: "admin",
            projectId: project.id,
            projectRole: "member",
          });
          await grant(tenant, project.id, actor, [IDENTITY_RULE]);
          const targets: (TestIdentity & { role: TargetRole })[] = [];
          for (const initial of initialRoles) {
            const t = await createIdentity(tenant, { projectId: project.id, projectRole: initial });
            expectOk(await tenant.admin.universalAuth.attach({ params: { identityId: t.id }, body: {} }));
            targets.push({ ...t, role: initial });
          }
          const held = new Set<number>();
          for (const op of ops) {
            const target = targets[op.target]!;
            const identityId = target.id;
            if (op.kind === "mint") {
              const res = await actor.client.tokenAuth.createToken({ params: { identityId }, body: {} });
              if (res.status === 200) held.add(op.target);
              else expect(res.status).toBe(403);
            } else if (op.kind === "client-secret") {
              const res = await actor.client.universalAuth.createClientSecret({ params: { identityId }, body: {} });
              if (res.status === 200) {
                const login = await tenant.anonymous.universalAuth.login({
                  body: { clientId: await clientIdOf(tenant.admin, identityId), clientSecret: res.body.clientSecret },
                });
                expect(login.status).toBe(200);
                held.add(op.target);
              } else expect(res.status).toBe(403);
            } else if (op.kind === "set-role") {
              const res = await actor.client.projects.updateIdentityMembership({
                params: { projectId: project.id, identityId },
                body: { roles: [{ role: op.role }] },
              });
              if (res.status === 200) target.role = op.role;
              else expect(res.status).toBe(403);
            } else {
              const res = await actor.client.identities.update({
                params: { identityId },
                body: { metadata: [{ key: "team", value: op.value }] },
              });
              expect([200, 403]).toContain(res.status);
            }
          }
          const actorAbility = buildAbility(MANAGER_RULES);
          for (const index of held) {
            const rules = PROJECT_ROLE_RULES[targets[index]!.role]!;
            expect(missingPermissions(actorAbility, rules)).toEqual([]);
          }
        },
      ),
      { numRuns: 10 },
    );
  }, 180_000);
});

const clientIdOf = async (admin: TestIdentity["client"], identityId: string) =>
  expectOk(await admin.universalAuth.get({ params: { identityId } })).identityUniversalAuth.clientId;
