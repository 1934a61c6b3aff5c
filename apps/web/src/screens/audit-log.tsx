import { Fragment, useState, type FormEvent } from "react";
import { keepPreviousData, useMutation, useQuery } from "@tanstack/react-query";
import { AUDIT_ACTOR_TYPES, contract } from "@keyward/contract";
import { ok, type KeywardClient } from "@keyward/client";
import { useClient } from "../session";
import { Link, setSearch, useLocation } from "../router";
import {
  Badge,
  Button,
  Empty,
  ErrorBanner,
  Field,
  Loading,
  PageHeader,
  SelectField,
  formatDateTime,
  TableHead,
} from "../ui/components";
import { saveFile } from "../ui/download";
import { validate, type FieldErrors } from "../ui/form";

const PAGE = 25;
const FILTERS = ["projectId", "eventType", "actorType", "startDate", "endDate"] as const;
type Filters = Partial<Record<(typeof FILTERS)[number], string>>;

/** `datetime-local` has no zone: read it as local time and send it as an ISO instant. */
const toIso = (local: string) => (local ? new Date(local).toISOString() : undefined);
const toLocal = (iso: string | null) => (iso ? new Date(iso).toISOString().slice(0, 16) : "");

/** An export stops after this many events (ten full pages): narrower filters export the rest. */
const EXPORT_LIMIT = 10_000;

type ListQuery = typeof contract.auditLogs.list.query._input;

/** The events matching `filters`, every page of them up to EXPORT_LIMIT, one JSON object per line. */
const exportEvents = async (client: KeywardClient, filters: Filters) => {
  const lines: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await ok(client.auditLogs.list({ query: { ...filters, cursor, limit: 1000 } as ListQuery }));
    for (const log of page.auditLogs) lines.push(JSON.stringify(log));
    cursor = page.nextCursor ?? undefined;
  } while (cursor && lines.length < EXPORT_LIMIT);
  saveFile("audit-log.jsonl", lines.length > 0 ? `${lines.join("\n")}\n` : "", "application/x-ndjson");
  return { count: lines.length, more: cursor !== undefined };
};

/** What an event recorded, as name/value rows (values other than text shown as JSON). */
const Details = ({
  log,
}: {
  log: { event: { metadata: object }; actor: { metadata: object }; userAgent: string | null };
}) => {
  const rows: [string, unknown][] = [
    ...Object.entries(log.event.metadata),
    ...Object.entries(log.actor.metadata).map(([key, value]): [string, unknown] => [`actor.${key}`, value]),
    ["userAgent", log.userAgent],
  ];
  return (
    <dl className="details">
      {rows.map(([key, value]) => (
        <div key={key}>
          <dt>{key}</dt>
          <dd>
            <code>{typeof value === "string" ? value : JSON.stringify(value)}</code>
          </dd>
        </div>
      ))}
    </dl>
  );
};

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
  const [open, setOpen] = useState<string | null>(null);
  const eventTypes = useQuery({ queryKey: ["audit-event-types"], queryFn: () => ok(client.auditLogs.eventTypes()) });
  const exported = useMutation({ mutationFn: () => exportEvents(client, applied) });
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
      <PageHeader title="Audit log">
        <Link href="/audit-log/streams">Streams</Link>
      </PageHeader>
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
          label="Add an event type"
          value=""
          onChange={(type) => set("eventType")([draft.eventType?.trim(), type].filter(Boolean).join(", "))}
          options={[
            { value: "", label: "Choose…" },
            ...(eventTypes.data?.eventTypes ?? []).map((type) => ({ value: type, label: type })),
          ]}
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
      <div className="row">
        <Button variant="secondary" disabled={exported.isPending} onClick={() => exported.mutate()}>
          Export as JSON lines
        </Button>
        <span className="muted small" role="status">
          {exported.data
            ? `Exported ${exported.data.count} events${exported.data.more ? ` (the newest ${EXPORT_LIMIT}: narrow the filters for the rest)` : ""}.`
            : ""}
        </span>
      </div>
      <ErrorBanner error={logs.error ?? exported.error} />
      {logs.isPending ? <Loading what="audit events" /> : null}
      {logs.data && list.length === 0 ? <Empty>No events match these filters.</Empty> : null}
      {list.length > 0 ? (
        <table className="table" aria-label="Audit events">
          <TableHead columns={["Time", "Event", "Actor", "Project", "Source"]} actions />
          <tbody>
            {list.map((log) => (
              <Fragment key={log.id}>
                <tr>
                  <td>{formatDateTime(log.createdAt)}</td>
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
                  <td>
                    <Button
                      variant="ghost"
                      aria-expanded={open === log.id}
                      aria-controls={`details-${log.id}`}
                      onClick={() => setOpen(open === log.id ? null : log.id)}
                    >
                      Details
                      <span className="sr-only">
                        {" "}
                        of {log.event.type} at {formatDateTime(log.createdAt)}
                      </span>
                    </Button>
                  </td>
                </tr>
                {open === log.id ? (
                  <tr id={`details-${log.id}`}>
                    <td colSpan={6}>
                      <Details log={log} />
                    </td>
                  </tr>
                ) : null}
              </Fragment>
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
