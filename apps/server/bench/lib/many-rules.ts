import { PROJECT_PERMISSION_CATALOG } from "@keyward/contract";
import type { KeywardClient } from "@keyward/client";
import type { PermissionRule } from "../../src/permissions";
import { setupOk } from "./endpoint";

const SUBJECTS = Object.entries(PROJECT_PERMISSION_CATALOG);
const ENVS = ["dev", "staging", "prod", "qa"];
const PATHED = new Set(["secrets", "secret-folders", "secret-imports"]);

/** The one rule both identities read with: describe and read values of dev secrets anywhere. */
export const READ_RULE: PermissionRule = {
  subject: "secrets",
  action: ["describeSecret", "readValue"],
  inverted: false,
  conditions: { environment: "dev", secretPath: { $glob: "/**" } },
};

/**
 * `count` rules of a realistic mix (numbered from `offset`): every subject, a third conditional on
 * environment and path, one in eleven a forbid. None touches a secret at `/`: each conditional
 * secret rule is bound to a folder `/app-<n>/**`, and the unconditional forbids name other subjects.
 */
export const manyRules = (count: number, offset = 0): PermissionRule[] =>
  Array.from({ length: count }, (_, n): PermissionRule => {
    const i = n + offset;
    const [subject, catalog] = SUBJECTS[i % SUBJECTS.length]!;
    // The legacy `read` of secrets may not be combined with the actions that replaced it.
    const actions = subject === "secrets" ? catalog.filter((a) => a !== "read") : catalog;
    const pathed = PATHED.has(subject);
    return {
      subject,
      action: actions.slice(0, 1 + (i % actions.length)),
      inverted: i % 11 === 10,
      ...(pathed
        ? {
            conditions: {
              environment: { $in: [ENVS[i % 4]!, ENVS[(i + 1) % 4]!] },
              secretPath: { $glob: `/app-${i % 7}/**` },
            },
          }
        : {}),
    };
  });

/** How the 1,000 rules are spread: two custom roles, a group's role, and additional privileges. */
export const SPREAD = { roleA: 400, roleB: 200, groupRole: 200, privileges: 4, perPrivilege: 50 };

/**
 * Custom roles and a group holding `SPREAD`'s rules, in `projectId`: returns the membership roles
 * for an identity and, once it is a member, a function that adds it to the group and gives it the
 * privileges. The read rule is one of role A's.
 */
export const prepareManyRules = async (admin: KeywardClient, projectId: string) => {
  const role = async (slug: string, permissions: PermissionRule[]) =>
    setupOk(
      await admin.roles.create({
        params: { projectId },
        body: { slug, name: slug, permissions: permissions as never },
      }),
    );
  await role("one-rule", [READ_RULE]);
  await role("many-a", [READ_RULE, ...manyRules(SPREAD.roleA - 1, 0)]);
  await role("many-b", manyRules(SPREAD.roleB, 1_000));
  await role("many-group", manyRules(SPREAD.groupRole, 2_000));
  const group = setupOk(await admin.groups.create({ body: { name: "many-rules" } }));
  setupOk(
    await admin.projectGroups.add({
      params: { projectId, groupIdOrName: group.id },
      body: { roles: [{ role: "many-group" }] },
    }),
  );
  const completeIdentity = async (identityId: string) => {
    setupOk(await admin.groups.addIdentity({ params: { id: group.id, machineIdentityId: identityId } }));
    for (let p = 0; p < SPREAD.privileges; p += 1) {
      setupOk(
        await admin.privileges.v2.create({
          body: {
            identityId,
            projectId,
            permissions: manyRules(SPREAD.perPrivilege, 3_000 + p * SPREAD.perPrivilege) as never,
            type: { isTemporary: false },
          },
        }),
      );
    }
  };
  return { completeIdentity };
};

/** Every rule of the 1,000-rule identity, as its grants hold them (for the in-process figures). */
export const allManyRules = (): PermissionRule[][] => [
  [READ_RULE, ...manyRules(SPREAD.roleA - 1, 0)],
  manyRules(SPREAD.roleB, 1_000),
  manyRules(SPREAD.groupRole, 2_000),
  ...Array.from({ length: SPREAD.privileges }, (_, p) =>
    manyRules(SPREAD.perPrivilege, 3_000 + p * SPREAD.perPrivilege),
  ),
];
