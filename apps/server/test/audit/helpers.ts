import type { AuditLog } from "@keyward/contract";
import { flushAuditBuffer } from "../../src/modules/audit/audit-buffer";
import { expectOk, type Tenant } from "../helpers/tenant";

/** A wide window: events of this test, whatever the time of day. */
export const sinceAnHourAgo = () => ({
  startDate: new Date(Date.now() - 3_600_000).toISOString(),
  endDate: new Date(Date.now() + 60_000).toISOString(),
});

/** The tenant's events (buffered reads written first), newest first. */
export const auditEvents = async (
  tenant: Tenant,
  query: Record<string, string | number | undefined> = {},
): Promise<AuditLog[]> => {
  // A read's event is buffered when its response has been written out, just after the client has it.
  await new Promise((resolve) => setTimeout(resolve, 20));
  await flushAuditBuffer(tenant.app.deps);
  const body = expectOk(await tenant.admin.auditLogs.list({ query: { ...sinceAnHourAgo(), limit: 1000, ...query } }));
  return body.auditLogs;
};

export const eventTypes = (events: AuditLog[]) => events.map((event) => event.event.type);

/** Events written after the response (refused logins) arrive a moment later: poll until `ready`. */
export const auditEventsWhen = async (
  tenant: Tenant,
  query: Record<string, string | number | undefined>,
  ready: (events: AuditLog[]) => boolean,
): Promise<AuditLog[]> => {
  for (let attempt = 0; ; attempt += 1) {
    const events = await auditEvents(tenant, query);
    if (ready(events) || attempt >= 50) return events;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};
