import type { MutatingOperation } from "../../../src/modules/audit/audit-events";
import { createFolder } from "../../helpers/structure";
import { createProject, uniqueName, type Tenant } from "../../helpers/tenant";
import {
  insertConnection,
  ldapTarget,
  mappingOf,
  mysqlTarget,
  postgresTarget,
  redisTarget,
  type Target,
} from "../../secret-rotations/helpers";
import { ok, type Step } from "./runner";

type RotationOperation = Extract<MutatingOperation, `secretRotations.${string}`>;
type RouteKey = "postgresCredentials" | "mysqlCredentials" | "redisCredentials" | "ldapPassword";

const routes = (tenant: Tenant, key: RouteKey) =>
  tenant.admin.secretRotations[key] as typeof tenant.admin.secretRotations.postgresCredentials;

/** What creating a rotation of `target` sends, in a new project and folder. */
const createBody = async (tenant: Tenant, target: Target) => {
  const project = await createProject(tenant);
  await createFolder(tenant, project.id, "dev", "/", "rotated");
  const connectionId = await insertConnection(tenant.app.deps, tenant.orgId, target.app, target.connection);
  return {
    project,
    body: {
      name: uniqueName("rotation"),
      projectId: project.id,
      connectionId,
      environment: "dev",
      secretPath: "/rotated",
      rotationInterval: 30,
      parameters: target.parameters,
      secretsMapping: mappingOf(target, "ROTATED"),
    } as never,
  };
};

const rowsOf = (key: RouteKey, target: () => Promise<Target>): Record<string, Step> => {
  const existing = async (tenant: Tenant) => {
    const { project, body } = await createBody(tenant, await target());
    const { secretRotation } = ok(await routes(tenant, key).create({ body }));
    return { project, rotation: secretRotation };
  };
  return {
    [`secretRotations.${key}.create`]: async ({ tenant, act }) => {
      const { project, body } = await createBody(tenant, await target());
      ok(await act(() => routes(tenant, key).create({ body })));
      return { projectId: project.id };
    },
    [`secretRotations.${key}.update`]: async ({ tenant, act }) => {
      const { project, rotation } = await existing(tenant);
      ok(
        await act(() =>
          routes(tenant, key).update({ params: { rotationId: rotation.id }, body: { description: "renamed" } }),
        ),
      );
      return { projectId: project.id, metadata: { rotationId: rotation.id } };
    },
    [`secretRotations.${key}.delete`]: async ({ tenant, act }) => {
      const { project, rotation } = await existing(tenant);
      ok(await act(() => routes(tenant, key).delete({ params: { rotationId: rotation.id }, query: {} })));
      return { projectId: project.id, metadata: { rotationId: rotation.id } };
    },
    [`secretRotations.${key}.rotate`]: async ({ tenant, act }) => {
      const { project, rotation } = await existing(tenant);
      ok(await act(() => routes(tenant, key).rotate({ params: { rotationId: rotation.id } })));
      return { projectId: project.id, metadata: { rotationId: rotation.id, status: "success" } };
    },
  };
};

export const ROTATION_STEPS = {
  ...rowsOf("postgresCredentials", () => postgresTarget()),
  ...rowsOf("mysqlCredentials", () => mysqlTarget()),
  ...rowsOf("redisCredentials", () => redisTarget()),
  ...rowsOf("ldapPassword", () => ldapTarget()),
} as Record<RotationOperation, Step>;
