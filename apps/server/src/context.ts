import type { Database, DatabaseKind } from "./db/database";
import type { Env } from "./env";
import type { DbHealth } from "./db/health";
import type { Listen } from "./db/listen";
import type { Lifecycle } from "./lib/lifecycle";
import type { Metrics } from "./lib/metrics";
import type { Logger } from "./lib/logger";
import type { SecretBox } from "./crypto/envelope";
import type { Job } from "./lib/loop";
import type { Mailer } from "./lib/mail";
import { scopeOfTransaction, type CommitScope, type Tx } from "./db/transaction";

/**
 * The authenticated caller: a machine identity holding an access token, or a person (a user) holding
 * a session's access token. One frozen object per cached token, shared by the requests it serves.
 */
export type Actor = Readonly<{
  type: "identity" | "user";
  /** The identity's or the user's id. */
  id: string;
  /** The identity's name, or the user's e-mail. */
  name: string;
  orgId: string;
  orgRole: string;
  /** Set when the identity is owned by a project rather than the organization. */
  identityProjectId: string | null;
  /** The access token's id, or for a user the session's. */
  tokenId: string;
  authMethod: string;
  isInstanceAdmin: boolean;
}>;

/** A token row as authentication needs it; cached for at most a second. */
export type AuthenticatedToken = {
  /** Handed to every request the cached token serves. */
  actor: Actor;
  ttl: number;
  numUsesLimit: number;
  issuedAt: number;
  trustedIps: readonly { ipAddress: string; type: "ipv4" | "ipv6"; prefix?: number }[];
};

/** The time source of the app: tests and benchmarks may pass their own. */
export type Clock = { now: () => number };

/**
 * Everything the app needs, built once by the composition root (`app/deps.ts`) or a test and passed
 * to createApp. Here only the platform's slots; each stateful module declares its own next to its
 * state (a `<module>.state.ts` beside it, by interface merging), and `buildDeps` spreads them, so the
 * compiler checks the whole.
 */
export interface AppDeps {
  clock: Clock;
  db: Database;
  dbKind: DatabaseKind;
  env: Env;
  logger: Logger;
  secretBox: SecretBox;
  ping: () => Promise<boolean>;
  /** The database's last known state: the status route and the error handler read it. */
  dbHealth: DbHealth;
  /** Follow the database's notices (LISTEN/NOTIFY) on either backend. */
  listen: Listen;
  /** Draining on shutdown, and the requests still in flight. */
  lifecycle: Lifecycle;
  /** Prometheus metrics of this process (served on METRICS_PORT). */
  metrics: Metrics;
  /** System roots plus OUTBOUND_EXTRA_CA_FILE, for outbound calls with no CA of their own (undefined: defaults). */
  outboundCa: string | undefined;
  /** Outgoing e-mail (invitations), when SMTP_URL is set. */
  mailer: Mailer | undefined;
  /** Background jobs this process may run (the worker starts them; tests start the ones they need). */
  jobs: AppJob[];
}

/** What a service sees of a request: never `req` itself. */
export type RequestContext = {
  deps: AppDeps;
  actor: Actor;
  clientIp: string;
  reqId: string;
  /** An audited request's scope: `inTransaction(ctx, …)` writes its event with the change. */
  scope?: ChangeScope;
};

/** What a change needs to commit with its event: the app, and the request's (or a job's) scope. */
export type ChangeContext = Pick<RequestContext, "deps" | "scope">;

/** What permission checks need: the app and the caller. */
export type ActorContext = Pick<RequestContext, "deps" | "actor" | "scope">;

/** A public route's context has no actor. */
export type PublicContext = Omit<RequestContext, "actor">;

/** A background job of this server: started with its dependencies. */
export type AppJob = Job<AppDeps>;

/** What a module adds to its change's event: new ids, versions, names, the project or org it belongs to. */
export type ChangeNote = {
  metadata?: Record<string, unknown>;
  projectId?: string;
  projectName?: string;
  orgId?: string;
  /** The event's type when the change became another kind than its route's (a write that opened a change request). */
  eventType?: string;
};

/**
 * A change's scope as modules see it: they note what only they know, and the transaction that
 * commits the change writes its event (`CommitScope`). The route entry opens a request's scope;
 * modules reach it only through their context (`ctx.scope`) or the transaction, never by importing
 * the audit module.
 */
export interface ChangeScope extends CommitScope {
  note(details: ChangeNote): void;
  /** The project whose permission the operation checked first: its event belongs to that project. */
  noteProject(projectId: string): void;
  /** The token-issuing path names who logged in; the login's event is written with the token. */
  noteLogin(identityId: string, authMethod: string, metadata: Record<string, unknown>): void;
  /** A public route that learns which person calls it (a session's refresh or sign-out) names them. */
  notePerson(person: { userId: string; email: string }, orgId: string): void;
}

/**
 * Where a change's scope is found: in its context, or, for a helper that is handed only the
 * transaction, in the transaction the request opened.
 */
export type ChangeTarget = { scope?: ChangeScope } | Tx;

const isTransaction = (target: ChangeTarget): target is Tx => (target as Partial<Tx>).isTransaction === true;
const isChangeScope = (scope: CommitScope | undefined): scope is ChangeScope => scope !== undefined && "note" in scope;

/** The change scope behind `target`, if there is one. */
export const changeScopeOf = (target: ChangeTarget): ChangeScope | undefined => {
  const scope = isTransaction(target) ? scopeOfTransaction(target) : target.scope;
  return isChangeScope(scope) ? scope : undefined;
};

/** Add what only the module knows (new ids, versions, names) to the change's event. */
export const noteAudit = (target: ChangeTarget, details: ChangeNote) => changeScopeOf(target)?.note(details);

/** Permission checks name the project an operation acts in. */
export const noteAuditProject = (target: ChangeTarget, projectId: string) =>
  changeScopeOf(target)?.noteProject(projectId);

/** The token-issuing path names who logged in. */
export const noteAuditLogin = (
  target: ChangeTarget,
  identityId: string,
  authMethod: string,
  metadata: Record<string, unknown>,
) => changeScopeOf(target)?.noteLogin(identityId, authMethod, metadata);
