import { useState, type FormEvent } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { contract, type AuditLogStream } from "@keyward/contract";
import { ok } from "@keyward/client";
import { useClient } from "../session";
import { Link } from "../router";
import { Badge, Button, Empty, ErrorBanner, Field, PageHeader, TableHead } from "../ui/components";
import { SecretValue } from "../ui/secret-value";
import { validate, type FieldErrors } from "../ui/form";

/** Where a stream stands: failing with the receiver's last answer, catching up, or delivered. */
const StreamStatus = ({ stream }: { stream: AuditLogStream }) =>
  stream.lastError ? (
    <>
      <Badge tone="bad">failing</Badge> <span className="small">{stream.lastError}</span>
    </>
  ) : stream.pendingEvents > 0 ? (
    <Badge tone="warn">{stream.pendingEvents} events waiting</Badge>
  ) : (
    <Badge tone="ok">up to date</Badge>
  );

const AddStream = () => {
  const client = useClient();
  const queryClient = useQueryClient();
  const [url, setUrl] = useState("");
  const [header, setHeader] = useState("");
  const [headerValue, setHeaderValue] = useState("");
  const [errors, setErrors] = useState<FieldErrors>({});
  const create = useMutation({
    mutationFn: (body: typeof contract.auditLogStreams.create.body._output) =>
      ok(client.auditLogStreams.create({ params: { provider: "custom" }, body })),
    onSuccess: async () => {
      setUrl("");
      setHeader("");
      setHeaderValue("");
      await queryClient.invalidateQueries({ queryKey: ["audit-streams"] });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const headers = header.trim() ? [{ key: header.trim(), value: headerValue }] : [];
    const checked = validate(contract.auditLogStreams.create.body, { credentials: { url, headers } });
    setErrors(checked.errors ?? {});
    if (checked.data) create.mutate(checked.data);
  };
  return (
    <form className="card stack" onSubmit={submit} noValidate aria-label="Add a stream">
      <div className="row">
        <Field
          label="Receiver URL"
          value={url}
          onChange={(e) => setUrl(e.target.value)}
          error={errors.credentials}
          placeholder="https://siem.example.com/keyward"
        />
        <Field label="Header name (optional)" value={header} onChange={(e) => setHeader(e.target.value)} />
        <Field
          label="Header value"
          type="password"
          value={headerValue}
          onChange={(e) => setHeaderValue(e.target.value)}
        />
        <Button type="submit" disabled={create.isPending}>
          Add stream
        </Button>
      </div>
      <ErrorBanner error={create.error} />
      {create.data ? (
        <div className="banner banner-info" role="status">
          Stream added. Its signing secret (the HMAC-SHA256 key of each delivery's <code>X-Keyward-Signature</code>) is
          shown this once: <SecretValue value={create.data.signingSecret} hidden={false} name="signing secret" />
        </div>
      ) : null}
    </form>
  );
};

const StreamRow = ({ stream }: { stream: AuditLogStream }) => {
  const client = useClient();
  const queryClient = useQueryClient();
  const remove = useMutation({
    mutationFn: () =>
      ok(client.auditLogStreams.delete({ params: { provider: stream.provider, logStreamId: stream.id } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ["audit-streams"] }),
  });
  return (
    <tr>
      <th scope="row">
        <code>{stream.credentials.url}</code>
      </th>
      <td className="small">{stream.credentials.headers.map((h) => h.key).join(", ") || "—"}</td>
      <td>
        <StreamStatus stream={stream} />
      </td>
      <td className="actions">
        <Button
          variant="danger"
          disabled={remove.isPending}
          onClick={() => {
            if (window.confirm(`Delete the stream to ${stream.credentials.url}? Undelivered events are dropped.`))
              remove.mutate();
          }}
        >
          Delete<span className="sr-only"> the stream to {stream.credentials.url}</span>
        </Button>
        <ErrorBanner error={remove.error} />
      </td>
    </tr>
  );
};

/** The organization's audit streams: where events are delivered, signed, and whether the receiver keeps up. */
export const AuditStreams = () => {
  const client = useClient();
  const streams = useQuery({
    queryKey: ["audit-streams"],
    queryFn: () => ok(client.auditLogStreams.list()),
    // Delivery state changes on its own: look again every few seconds while the page is open.
    refetchInterval: 5_000,
  });
  const list = streams.data?.auditLogStreams ?? [];
  return (
    <section className="stack">
      <p className="crumbs">
        <Link href="/audit-log">Audit log</Link> / <span>Streams</span>
      </p>
      <PageHeader title="Audit streams" />
      <AddStream />
      <ErrorBanner error={streams.error} />
      {streams.data && list.length === 0 ? <Empty>No streams: events stay here only.</Empty> : null}
      {list.length > 0 ? (
        <table className="table" aria-label="Audit streams">
          <TableHead columns={["Receiver", "Headers", "Delivery"]} actions />
          <tbody>
            {list.map((s) => (
              <StreamRow key={s.id} stream={s} />
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
};
