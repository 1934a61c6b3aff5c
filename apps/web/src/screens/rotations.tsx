import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { SECRET_ROTATION_TYPES, type SecretRotation, type SecretRotationType } from "@keyward/contract";
import { ok, type KeywardClient } from "@keyward/client";
import { useClient } from "../session";
import { Badge, Button, Empty, ErrorBanner, Loading, TableHead, formatDateTime } from "../ui/components";
import type { Project } from "./types";

const COLUMNS = [
  "Name",
  "Type",
  "Where",
  "Active user",
  "Auto-rotation",
  "Status",
  "Last rotated",
  "Next rotation",
  "Last attempt",
];

/** The typed client's route group of each kind of rotation: its actions live under it. */
const ROUTE_GROUPS = {
  "postgres-credentials": "postgresCredentials",
  "mysql-credentials": "mysqlCredentials",
  "redis-credentials": "redisCredentials",
  "ldap-password": "ldapPassword",
} as const satisfies Record<SecretRotationType, keyof KeywardClient["secretRotations"]>;

/** Whether the console knows how to act on a kind of rotation (a newer server may name others). */
const isKnownType = (type: string): type is SecretRotationType => Object.hasOwn(SECRET_ROTATION_TYPES, type);

/** A kind of rotation as people call it ("PostgreSQL Credentials"), or its slug when the console does not know it. */
const typeName = (type: string) => (isKnownType(type) ? SECRET_ROTATION_TYPES[type].name : type);

/** What the console does with a rotation, whatever its kind, each answering the rotation as it now stands. */
const rotationActions = (client: KeywardClient, type: SecretRotationType) => {
  const routes = client.secretRotations[ROUTE_GROUPS[type]];
  return {
    rotate: async (rotationId: string): Promise<SecretRotation> =>
      (await ok(routes.rotate({ params: { rotationId } }))).secretRotation,
    setAutoRotation: async (rotationId: string, isAutoRotationEnabled: boolean): Promise<SecretRotation> =>
      (await ok(routes.update({ params: { rotationId }, body: { isAutoRotationEnabled } }))).secretRotation,
  };
};

type Listed = { secretRotations: SecretRotation[] };

/**
 * How often the list is asked again: every second while a rotation is under way (so its end is seen),
 * every five while a failed one waits for its retry, else never.
 */
const refreshEvery = (data: Listed | undefined) => {
  const list = data?.secretRotations ?? [];
  if (list.some((rotation) => rotation.rotationStatus === "pending")) return 1_000;
  return list.some((rotation) => rotation.rotationStatus === "failed") ? 5_000 : false;
};

/** The user whose password the mapped secrets hold now (the other one keeps the previous password). */
const activeUser = (rotation: SecretRotation) => {
  const slot = rotation.activeIndex + 1;
  const username = rotation.parameters[`username${slot}`];
  if (typeof username === "string") return username;
  const dn = rotation.parameters.dn;
  return typeof dn === "string" ? dn : `credential ${slot} of 2`;
};

const pad = (n: number) => String(n).padStart(2, "0");

/** "every 30 days at 02:00 UTC": when scheduled rotations run. */
const schedule = (rotation: SecretRotation) =>
  `every ${rotation.rotationInterval} day${rotation.rotationInterval === 1 ? "" : "s"} at ` +
  `${pad(rotation.rotateAtUtc.hours)}:${pad(rotation.rotateAtUtc.minutes)} UTC`;

const STATUS_TONES = { success: "ok", failed: "bad", pending: "warn" } as const;
const STATUS_WORDS = { success: "rotated", failed: "failed", pending: "rotating" } as const;

/** The last attempt's word: the server's message (why it failed) and when that attempt was made. */
const AttemptMessage = ({ rotation }: { rotation: SecretRotation }) =>
  rotation.lastRotationMessage ? (
    <div className="small">
      <div className={rotation.rotationStatus === "failed" ? "field-error" : undefined}>
        {rotation.lastRotationMessage}
      </div>
      {rotation.lastRotationAttemptedAt ? (
        <div className="muted">Attempted {formatDateTime(rotation.lastRotationAttemptedAt)}</div>
      ) : null}
    </div>
  ) : (
    <span className="muted small">—</span>
  );

/** One rotation with its actions; a refused action shows the server's message under the row. */
const RotationRow = ({
  rotation,
  onChanged,
  onFailed,
}: {
  rotation: SecretRotation;
  onChanged: (rotation: SecretRotation) => void;
  onFailed: () => void;
}) => {
  const client = useClient();
  const type = isKnownType(rotation.type) ? rotation.type : null;
  // A refused rotation may still have been attempted (a failure is recorded on the rotation): the list is read again.
  const rotate = useMutation({
    mutationFn: (known: SecretRotationType) => rotationActions(client, known).rotate(rotation.id),
    onSuccess: onChanged,
    onError: onFailed,
  });
  const toggle = useMutation({
    mutationFn: (known: SecretRotationType) =>
      rotationActions(client, known).setAutoRotation(rotation.id, !rotation.isAutoRotationEnabled),
    onSuccess: onChanged,
  });
  const named = <span className="sr-only"> {rotation.name}</span>;
  const error = rotate.error ?? toggle.error;
  return (
    <>
      <tr>
        <th scope="row">{rotation.name}</th>
        <td>{typeName(rotation.type)}</td>
        <td>
          <code>{`${rotation.environment.slug} ${rotation.folder.path}`}</code>
        </td>
        <td data-testid="active-user">
          <code>{activeUser(rotation)}</code>
        </td>
        <td>
          {rotation.isAutoRotationEnabled ? <Badge tone="ok">on</Badge> : <Badge>off</Badge>}
          <div className="muted small">{schedule(rotation)}</div>
        </td>
        <td data-testid="rotation-status">
          <Badge tone={STATUS_TONES[rotation.rotationStatus]}>{STATUS_WORDS[rotation.rotationStatus]}</Badge>
        </td>
        <td className="small" data-testid="last-rotated">
          {formatDateTime(rotation.lastRotatedAt)}
          {rotation.lastRotatedAt && rotation.isLastRotationManual ? <div className="muted">manual</div> : null}
        </td>
        <td className="small" data-testid="next-rotation">
          {formatDateTime(rotation.nextRotationAt)}
        </td>
        <td>
          <AttemptMessage rotation={rotation} />
        </td>
        <td>
          {type ? (
            <div className="row-actions">
              <Button disabled={rotate.isPending} onClick={() => rotate.mutate(type)}>
                Rotate now{named}
              </Button>
              <Button variant="secondary" disabled={toggle.isPending} onClick={() => toggle.mutate(type)}>
                {rotation.isAutoRotationEnabled ? "Turn off auto-rotation" : "Turn on auto-rotation"}
                {named}
              </Button>
            </div>
          ) : (
            <span className="muted small">Not handled by this console</span>
          )}
        </td>
      </tr>
      {error ? (
        <tr>
          <td colSpan={COLUMNS.length + 1}>
            <ErrorBanner error={error} />
          </td>
        </tr>
      ) : null}
    </>
  );
};

/** The project's secret rotations, in every environment and folder: where each stands and when it runs next. */
export const Rotations = ({ project }: { project: Project }) => {
  const client = useClient();
  const queryClient = useQueryClient();
  const projectId = project.id;
  const key = ["secret-rotations", projectId];
  const rotations = useQuery({
    queryKey: key,
    queryFn: () => ok(client.secretRotations.listAll({ query: { projectId } })),
    refetchInterval: (query) => refreshEvery(query.state.data),
  });
  // An action's answer is the rotation as it now stands: shown at once, and the list follows it from there.
  const changed = (next: SecretRotation) =>
    queryClient.setQueryData<Listed>(key, (old) =>
      old ? { secretRotations: old.secretRotations.map((r) => (r.id === next.id ? next : r)) } : old,
    );
  const reread = () => void queryClient.invalidateQueries({ queryKey: key });
  const list = [...(rotations.data?.secretRotations ?? [])].sort(
    (a, b) =>
      a.environment.slug.localeCompare(b.environment.slug) ||
      a.folder.path.localeCompare(b.folder.path) ||
      a.name.localeCompare(b.name),
  );
  return (
    <div className="stack">
      <ErrorBanner error={rotations.error} />
      {rotations.isPending ? <Loading what="rotations" /> : null}
      {rotations.data && list.length === 0 ? (
        <Empty>
          No rotations yet. A rotation gives two users of a database new passwords in turn, on a schedule, and keeps the
          folder&apos;s secrets set to the one changed last; the other still logs in until the next rotation. Rotations
          are created through the API, on an app connection and two existing users.
        </Empty>
      ) : null}
      {list.length > 0 ? (
        <table className="table" aria-label="Secret rotations">
          <TableHead columns={COLUMNS} actions />
          <tbody>
            {list.map((rotation) => (
              <RotationRow key={rotation.id} rotation={rotation} onChanged={changed} onFailed={reread} />
            ))}
          </tbody>
        </table>
      ) : null}
    </div>
  );
};
