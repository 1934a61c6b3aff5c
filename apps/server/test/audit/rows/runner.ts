import { contract } from "@keyward/contract";
import type { AuditLog } from "@keyward/contract";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { AuditSpec } from "../../../src/modules/audit/audit-events";
import { routesOf } from "../../../src/app/route-entry";
import { getTestApp } from "../../helpers/app";
import { createTenant, type Tenant } from "../../helpers/tenant";
import { auditEvents } from "../helpers";

/** What a row's event must say; `projectId: null` for an organization-level operation. */
export type Expected = {
  projectId: string | null;
  metadata?: Record<string, unknown>;
  /** Defaults to the tenant's organization. */
  orgId?: string | null;
  /** Defaults to the tenant's admin identity. */
  actor?: { type: string; metadata: Record<string, unknown> };
  /** The token whose organization holds the event, when it is not the tenant admin's. */
  listWith?: Tenant;
  /** The row's events, when the step had to gather them itself (another app instance). */
  observed?: AuditLog[];
};

export type StepContext = {
  tenant: Tenant;
  /** Runs the operation under test: only events written from here on belong to the row. */
  act: <R>(call: () => Promise<R>) => Promise<R>;
};

/** Sets up a fixture, performs the operation through `act`, and says what its event must hold. */
export type Step = (c: StepContext) => Promise<Expected>;

/** The contract's operations, split like `MutatingOperation` / `ReadOperation`. */
export const contractOperations = (mutating: boolean): string[] =>
  routesOf(contract)
    .filter(([route]) => (route.method !== "GET") === mutating)
    .map(([, operation]) => operation)
    .sort();

/** A secret write's answer when it was made (not a change request opened instead). */
export const written = <R extends { status: number; body: unknown }>(response: R) => {
  const body = ok(response);
  if (typeof body === "object" && body !== null && "approval" in body)
    throw new Error(`expected a write, a change request was opened: ${JSON.stringify(body)}`);
  return body as Exclude<typeof body, { approval: unknown }>;
};

/** 200 or fail with the body. */
export const ok = <R extends { status: number; body: unknown }>(response: R): Extract<R, { status: 200 }>["body"] => {
  if (response.status !== 200)
    throw new Error(`expected 200, got ${response.status}: ${JSON.stringify(response.body)}`);
  return response.body;
};

/** One event written by the row's operation, with the mapped type, org, project, actor and metadata. */
export const auditRow = (operation: string, spec: AuditSpec, step: Step, eventType = spec.type) =>
  it(`${operation} records ${eventType}`, async () => {
    const tenant = await createTenant();
    const warn = vi.spyOn(tenant.app.deps.logger, "warn");
    let before: Set<string> | undefined;
    const act = async <R>(call: () => Promise<R>) => {
      before = new Set((await auditEvents(tenant)).map((event) => event.id));
      warn.mockClear();
      return call();
    };
    const expected = await step({ tenant, act });
    expect(before, "the step called act").toBeDefined();
    // A refused login's event is written once its response has gone: give it a moment to land.
    const fresh = async () =>
      (await auditEvents(expected.listWith ?? tenant)).filter((event) => !before!.has(event.id));
    let events = expected.observed ?? (await fresh());
    for (let attempt = 0; !expected.observed && events.length === 0 && attempt < 50; attempt++) events = await fresh();
    const written = warn.mock.calls.filter((call) => String(call[1] ?? call[0]).includes("audit event written after"));
    warn.mockRestore();
    expect(events.map((event) => event.event.type)).toEqual([eventType]);
    const [event] = events as [AuditLog];
    const seen = JSON.stringify(event);
    expect(written, `the event was written in the change's transaction: ${seen}`).toEqual([]);
    expect(event.orgId, seen).toBe(expected.orgId === undefined ? tenant.orgId : expected.orgId);
    expect(event.projectId, seen).toBe(expected.projectId);
    expect(event.actor, seen).toMatchObject(
      expected.actor ?? { type: "identity", metadata: { identityId: tenant.adminIdentityId } },
    );
    expect(event.event.metadata, seen).toMatchObject(expected.metadata ?? {});
  });

const releases = new Set<() => Promise<void>>();

/**
 * A resource several rows of a file share (an app with settings of its own starts in seconds), started
 * by the first row that needs it and released after the file's last row.
 */
export const sharedForFile = <T extends { close: () => Promise<void> }>(start: () => Promise<T>) => {
  let started: Promise<T> | undefined;
  return () => {
    if (!started) {
      started = start();
      const release = async () => {
        const resource = started;
        started = undefined;
        releases.delete(release);
        await resource?.then((r) => r.close()).catch(() => undefined);
      };
      releases.add(release);
    }
    return started;
  };
};

/** The rows of one module group, each its own test; the shared app starts before the first. */
export const describeAuditRows = (title: string, steps: Record<string, Step>, specs: Record<string, AuditSpec>) =>
  describe(title, () => {
    beforeAll(async () => {
      await getTestApp();
    });
    afterAll(async () => {
      for (const release of [...releases]) await release();
    });
    for (const [operation, step] of Object.entries(steps)) auditRow(operation, specs[operation]!, step);
  });
