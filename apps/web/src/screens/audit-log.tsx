import { useState, type FormEvent } from "react";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { AUDIT_ACTOR_TYPES, contract } from "@keyward/contract";
import { ok } from "@keyward/client";
import { useClient } from "../session";
import { setSearch, useLocation } from "../router";
import {
  Badge,
  Button,
  Empty,
  ErrorBanner,
  Field,
  Loading,
  PageHeader,
  SelectField,
  formatDate,
  TableHead,
} from "../ui/components";
import { validate, type FieldErrors } from "../ui/form";

const PAGE = 25;
const FILTERS = ["projectId", "eventType", "actorType", "startDate", "endDate"] as const;
type Filters = Partial<Record<(typeof FILTERS)[number], string>>;

/** `datetime-local` has no zone: read it as local time and send it as an ISO instant. */
const toIso = (local: string) => (local ? new Date(local).toISOString() : undefined);
const toLocal = (iso: string | null) => (iso ? new Date(iso).toISOString().slice(0, 16) : "");

const actorName = (actor: { type: string; metadata: Record<string, unknown> }) => {
  const name = actor.metadata.name ?? actor.metadata.identityName ?? actor.metadata.identityId;
  return typeof name === "string" ? name : actor.type;
};

/** The organization's audit events, newest first, filtered by project, event, actor and time. */
export const AuditLog = () => {
  const client = useClient();
  const { search } = useLocation();
  const applied: Filters = Object.fromEntries(FILTERS.map((key) => [key, search.get(key) ?? undefined]));
  // Keyset paging: `cursor` (from the previous page's nextCursor) in the address; the cursors of the
  // pages before it are kept here so "Newer" can step back.
  const cursor = search.get("cursor") ?? undefined;
  const [previous, setPrevious] = useState<(string | undefined)[]>([]);
  const [draft, setDraft] = useState<Filters>({
    ...applied,
    startDate: toLocal(search.get("startDate")),
    endDate: toLocal(search.get("endDate")),
  });
  const [errors, setErrors] = useState<FieldErrors>({});
  const projects = useQuery({ queryKey: ["projects"], queryFn: () => ok(client.projects.list({ query: {} })) });
  const query = { ...applied, cursor, limit: PAGE };
  const logs = useQuery({
    queryKey: ["audit-logs", query],
    placeholderData: keepPreviousData,
    queryFn: () => ok(client.auditLogs.list({ query: query as typeof contract.auditLogs.list.query._input })),
  });

  const apply = (event: FormEvent) => {
    event.preventDefault();
    const next = {
      projectId: draft.projectId || undefined,
      eventType: draft.eventType?.trim() || undefined,
      actorType: draft.actorType || undefined,
      startDate: toIso(draft.startDate ?? ""),
      endDate: toIso(draft.endDate ?? ""),
    };
    const checked = validate(contract.auditLogs.list.query, next);
    setErrors(checked.errors ?? {});
    if (checked.data) {
      setPrevious([]);
      setSearch({ ...next, cursor: undefined });
    }
  };
  const set = (key: keyof Filters) => (value: string) => setDraft((d) => ({ ...d, [key]: value }));
  const list = logs.data?.auditLogs ?? [];
  return (
    <section className="stack">
      <PageHeader title="Audit log" />
      <form className="card row" onSubmit={apply} noValidate aria-label="Audit log filters">
        <SelectField
          label="Project"
          value={draft.projectId ?? ""}
          onChange={set("projectId")}
          options={[
            { value: "", label: "All projects" },
            ...(projects.data?.projects ?? []).map((p) => ({ value: p.id, label: p.name })),
          ]}
        />
        <Field
          label="Event types"
          placeholder="create-secret, delete-secret"
          value={draft.eventType ?? ""}
          onChange={(e) => set("eventType")(e.target.value)}
          error={errors.eventType}
        />
        <SelectField
          label="Actor type"
          value={draft.actorType ?? ""}
          onChange={set("actorType")}
          options={[{ value: "", label: "Any" }, ...AUDIT_ACTOR_TYPES.map((t) => ({ value: t, label: t }))]}
        />
        <Field
          label="From"
          type="datetime-local"
          value={draft.startDate ?? ""}
          onChange={(e) => set("startDate")(e.target.value)}
          error={errors.startDate}
        />
        <Field
          label="To"
          type="datetime-local"
          value={draft.endDate ?? ""}
          onChange={(e) => set("endDate")(e.target.value)}
          error={errors.endDate}
        />
        <Button type="submit">Apply filters</Button>
      </form>
      <ErrorBanner error={logs.error} />
      {logs.isPending ? <Loading what="audit events" /> : null}
      {logs.data && list.length === 0 ? <Empty>No events match these filters.</Empty> : null}
      {list.length > 0 ? (
        <table className="table" aria-label="Audit events">
          <TableHead columns={["Time", "Event", "Actor", "Project", "Source"]} />
          <tbody>
            {list.map((log) => (
              <tr key={log.id}>
                <td>{formatDate(log.createdAt)}</td>
                <td>
                  <Badge>{log.event.type}</Badge>
                  {typeof log.event.metadata.secretKey === "string" ? (
                    <code> {log.event.metadata.secretKey}</code>
                  ) : null}
                </td>
                <td>
                  {actorName(log.actor)} <span className="muted small">({log.actor.type})</span>
                </td>
                <td>{log.projectName ?? "—"}</td>
                <td className="small">
                  {log.ipAddress ?? ""} {log.userAgentType ? <Badge>{log.userAgentType}</Badge> : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <div className="row">
        <Button
          variant="secondary"
          disabled={cursor === undefined}
          onClick={() => {
            setSearch({ cursor: previous.at(-1) });
            setPrevious((stack) => stack.slice(0, -1));
          }}
        >
          Newer
        </Button>
        <Button
          variant="secondary"
          disabled={!logs.data?.nextCursor}
          onClick={() => {
            setPrevious((stack) => [...stack, cursor]);
            setSearch({ cursor: logs.data?.nextCursor ?? undefined });
          }}
        >
          Older
        </Button>
      </div>
    </section>
  );
};
