import type { ZodTypeAny } from "zod";
import { useState, type FormEvent } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { APP_CONNECTION_OPTIONS, contract, type AppConnection } from "@keyward/contract";
import { ok, type KeywardClient } from "@keyward/client";
import { useClient } from "../session";
import {
  Button,
  Empty,
  ErrorBanner,
  Field,
  Loading,
  PageHeader,
  SelectField,
  TableHead,
  formatDate,
} from "../ui/components";
import { validate, type FieldErrors } from "../ui/form";

type App = (typeof APP_CONNECTION_OPTIONS)[number]["app"];

type Postgres = KeywardClient["appConnections"]["postgres"];
/** What the screen calls on every app's routes; each app's body is checked against its own contract first. */
type Routes = {
  create: (args: { body: unknown }) => ReturnType<Postgres["create"]>;
  delete: (args: { params: { connectionId: string } }) => ReturnType<Postgres["delete"]>;
};

/** The contract's key of each app's routes (`azure-key-vault` is `azureKeyVault`). */
const routesOf = (client: KeywardClient, app: App) =>
  client.appConnections[app === "azure-key-vault" ? "azureKeyVault" : app] as unknown as Routes;
const contractOf = (app: App) => contract.appConnections[app === "azure-key-vault" ? "azureKeyVault" : app];

/** What each app's credentials hold, as a starting point for the JSON field. */
const TEMPLATES: Record<App, Record<string, unknown>> = {
  postgres: { host: "", port: 5432, database: "", username: "", password: "" },
  mysql: { host: "", port: 3306, database: "", username: "", password: "" },
  redis: { host: "", port: 6379, username: "default", password: "" },
  ldap: { provider: "openldap", url: "ldaps://", dn: "", password: "" },
  // Or { "roleArn": "arn:aws:iam::<account>:role/<name>" }: a role this instance assumes for the organization.
  aws: { accessKeyId: "", secretAccessKey: "" },
  github: { personalAccessToken: "" },
  gcp: { serviceAccountKey: "(paste the key file's JSON)" },
  "azure-key-vault": { tenantId: "", clientId: "", clientSecret: "" },
};

const template = (app: App) => JSON.stringify(TEMPLATES[app], null, 2);

/** A connection's stored fields the server shows (never a password, key or token). */
const shownFields = (connection: AppConnection) =>
  Object.entries(connection.credentials)
    .map(([key, value]) => `${key}: ${typeof value === "string" ? value : JSON.stringify(value)}`)
    .join(", ");

const CreateConnection = () => {
  const client = useClient();
  const queryClient = useQueryClient();
  const [app, setApp] = useState<App>("postgres");
  const [name, setName] = useState("");
  const [credentials, setCredentials] = useState(template("postgres"));
  const [errors, setErrors] = useState<FieldErrors>({});
  const create = useMutation({
    mutationFn: (body: unknown) => ok(routesOf(client, app).create({ body })),
    onSuccess: async () => {
      // The credentials are sent once and not kept in the page.
      setName("");
      setCredentials(template(app));
      await queryClient.invalidateQueries({ queryKey: ["app-connections"] });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    let parsed: unknown;
    try {
      parsed = JSON.parse(credentials);
    } catch {
      setErrors({ credentials: "Credentials must be JSON" });
      return;
    }
    // AWS credentials holding a role ARN sign in by assuming that role.
    const assumesRole = app === "aws" && typeof parsed === "object" && parsed !== null && "roleArn" in parsed;
    const body = { name, credentials: parsed, ...(assumesRole ? { method: "assume-role" } : {}) };
    // AWS's body is one of two shapes: checked against the one its credentials pick, so errors name fields.
    const schema: ZodTypeAny =
      app === "aws"
        ? contract.appConnections.aws.create.body.options[assumesRole ? 1 : 0]
        : contractOf(app).create.body;
    const checked = validate(schema, body);
    // A credentials error names the field inside them (database: Required).
    const inner = schema.safeParse(body).error?.issues.find((issue) => issue.path[0] === "credentials");
    setErrors({
      ...(checked.errors ?? {}),
      ...(inner ? { credentials: `${inner.path.slice(1).join(".") || "credentials"}: ${inner.message}` } : {}),
    });
    if (checked.data) create.mutate(body);
  };
  return (
    <form className="card stack" onSubmit={submit} noValidate aria-label="Add a connection">
      <div className="row">
        <SelectField
          label="App"
          value={app}
          onChange={(value) => {
            setApp(value as App);
            setCredentials(template(value as App));
          }}
          options={APP_CONNECTION_OPTIONS.map((o) => ({ value: o.app, label: o.name }))}
        />
        <Field label="Connection name" value={name} onChange={(e) => setName(e.target.value)} error={errors.name} />
      </div>
      <div className="field">
        <label htmlFor="connection-credentials">Credentials (JSON)</label>
        <textarea
          id="connection-credentials"
          rows={6}
          spellCheck={false}
          value={credentials}
          onChange={(e) => setCredentials(e.target.value)}
          aria-invalid={errors.credentials ? true : undefined}
          aria-describedby="connection-credentials-hint"
        />
        <small className={errors.credentials ? "field-error" : "hint"} id="connection-credentials-hint">
          {errors.credentials ?? "Keyward connects with them before saving; once saved, secrets are never shown again."}
        </small>
      </div>
      <ErrorBanner error={create.error} />
      <div className="form-actions">
        <Button type="submit" disabled={create.isPending}>
          Add connection
        </Button>
      </div>
    </form>
  );
};

const ConnectionRow = ({ connection }: { connection: AppConnection }) => {
  const client = useClient();
  const queryClient = useQueryClient();
  const app = connection.app as App;
  const remove = useMutation({
    mutationFn: () => ok(routesOf(client, app).delete({ params: { connectionId: connection.id } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ["app-connections"] }),
  });
  return (
    <tr>
      <th scope="row">
        <code>{connection.name}</code>
      </th>
      <td>{APP_CONNECTION_OPTIONS.find((o) => o.app === app)?.name ?? connection.app}</td>
      <td className="small">{shownFields(connection)}</td>
      <td className="small">{connection.projectId ? "project" : "organization"}</td>
      <td className="small">{formatDate(connection.createdAt)}</td>
      <td className="actions">
        <Button
          variant="danger"
          disabled={remove.isPending}
          onClick={() => {
            if (window.confirm(`Delete the connection ${connection.name}?`)) remove.mutate();
          }}
        >
          Delete<span className="sr-only"> {connection.name}</span>
        </Button>
        <ErrorBanner error={remove.error} />
      </td>
    </tr>
  );
};

/** The organization's connections to outside systems (rotations and syncs use them); credentials go in, never out. */
export const AppConnections = () => {
  const client = useClient();
  const connections = useQuery({
    queryKey: ["app-connections"],
    queryFn: () => ok(client.appConnections.listAll({ query: {} })),
  });
  const list = connections.data?.appConnections ?? [];
  return (
    <section className="stack">
      <PageHeader title="App connections" />
      <CreateConnection />
      <ErrorBanner error={connections.error} />
      {connections.isPending ? <Loading what="connections" /> : null}
      {connections.data && list.length === 0 ? <Empty>No connections yet.</Empty> : null}
      {list.length > 0 ? (
        <table className="table" aria-label="App connections">
          <TableHead columns={["Name", "App", "Settings", "Belongs to", "Created"]} actions />
          <tbody>
            {list.map((c) => (
              <ConnectionRow key={c.id} connection={c} />
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
};
