import { PageHeader } from "../ui/components";

/** Placeholder until the audit-log route exists on the server. */
export const AuditLog = () => (
  <section>
    <PageHeader title="Audit log" />
    <p className="empty">The audit log is not available on this server yet.</p>
  </section>
);
