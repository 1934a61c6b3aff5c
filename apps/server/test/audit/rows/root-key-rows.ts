import type { MutatingOperation } from "../../../src/modules/audit/audit-events";
import { driveRotation } from "../../../src/modules/root-keys/root-key-rotation";
import type { Tenant } from "../../helpers/tenant";
import { expect } from "vitest";
import { ok, type Step } from "./runner";

export type RootKeyOperation = Extract<MutatingOperation, `rootKeys.${string}`>;

/** Root-key events belong to the instance admin's own organization, with the bootstrap identity as actor. */
const asInstanceAdmin = (tenant: Tenant) => {
  const orgId = tenant.app.bootstrap.organization.id;
  const admin = tenant.app.client(tenant.app.rootToken);
  const events = async () => ok(await admin.auditLogs.list({ query: { limit: 50 } })).auditLogs;
  /** The root-key events `call` wrote in the instance admin's organization. */
  const observe = async <R>(act: (call: () => Promise<R>) => Promise<R>, call: () => Promise<R>) => {
    const before = new Set((await events()).map((event) => event.id));
    const result = await act(call);
    const observed = (await events()).filter((event) => !before.has(event.id) && event.event.type.includes("root-"));
    return { result, observed };
  };
  return {
    admin,
    observe,
    expected: {
      projectId: null,
      orgId,
      listWith: { ...tenant, orgId, admin },
      actor: { type: "identity", metadata: { identityId: tenant.app.bootstrap.identity.id } },
    },
  };
};

export const ROOT_KEY_STEPS: Record<RootKeyOperation, Step> = {
  "rootKeys.startRotation": async ({ tenant, act }) => {
    const { admin, observe, expected } = asInstanceAdmin(tenant);
    // Another file of this process (the generated-input fuzzer) may have started one on the shared app.
    await driveRotation(tenant.app.deps);
    const { result: started, observed } = await observe(act, () => admin.rootKeys.startRotation({ body: {} }));
    if (started.status !== 202) throw new Error(`rotation refused: ${JSON.stringify(started.body)}`);
    const { rotation } = started.body;
    // The shared app runs no jobs: finish the rotation here, so no later test meets one running.
    const outcome = await driveRotation(tenant.app.deps);
    const seen = ok(await admin.rootKeys.getRotation({ params: { rotationId: rotation.id } })).rotation;
    expect(outcome, seen.error ?? "").toBe("completed");
    return {
      ...expected,
      observed,
      metadata: { rotationId: rotation.id, fromVersion: rotation.fromVersion, toVersion: rotation.toVersion },
    };
  },
  "rootKeys.updateEncryptionStrategy": async ({ tenant, act }) => {
    const { admin, observe, expected } = asInstanceAdmin(tenant);
    await driveRotation(tenant.app.deps);
    const { result, observed } = await observe(act, () =>
      admin.rootKeys.updateEncryptionStrategy({ body: { strategy: "SOFTWARE" } }),
    );
    ok(result);
    return { ...expected, observed, metadata: { from: "SOFTWARE", to: "SOFTWARE" } };
  },
};
