import type { Request, Response } from "express";
import {
  changeScopeOf,
  type Actor,
  type AppDeps,
  type ChangeContext,
  type ChangeNote,
  type ChangeScope,
  type ChangeTarget,
} from "../../context";
import { afterCommit, inTransaction, type Tx } from "../../db/transaction";
import { toWellFormedText } from "../../http/well-formed";
import { attachScope } from "../../http/authenticate";
import { auditOriginOf } from "./audit-protocol";
import { failedLoginType, type AuditSpec, type PlatformEventType } from "./audit-events";
import type { AuditActor, AuditEventInput } from "./audit-writer";
import { actorText, reducedAuditEvent, writeAuditEvents } from "./audit-writer";
import { requestMetadata } from "./audit-request";
import { bufferAuditEvent } from "./audit-buffer";
import { findLoginSubject } from "./audit.repository";

/** `universal-auth` -> `identityUniversalAuthId`. */
export const authMethodIdKey = (method: string) =>
  `identity${method
    .replace(/-auth$/, "")
    .split("-")
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join("")}AuthId`;

type ErrorBody = { error?: unknown; message?: unknown } | undefined;

const PLATFORM_ACTOR: AuditActor = Object.freeze({ type: "platform", id: null, metadata: Object.freeze({}) });

/**
 * The audit actor of an authenticated caller with its serialised form, built once per `Actor` (one
 * per cached token) and frozen: the requests of one token share it, and read events do not
 * serialise the same actor again and again.
 */
const auditActorOf = (deps: AppDeps, actor: Actor): AuditActor => {
  let audit = deps.auditActors.get(actor);
  if (!audit) {
    const fields =
      actor.type === "user"
        ? {
            type: "user" as const,
            id: actor.id,
            metadata: Object.freeze({ userId: actor.id, email: actor.name, authMethod: actor.authMethod }),
          }
        : {
            type: "identity" as const,
            id: actor.id,
            metadata: Object.freeze({ identityId: actor.id, name: actor.name, authMethod: actor.authMethod }),
          };
    // One literal with every property: a spread then an added property gave each cached actor its own
    // hidden class and out-of-object storage (~230 bytes per token held).
    audit = Object.freeze({ type: fields.type, id: fields.id, metadata: fields.metadata, text: actorText(fields) });
    deps.auditActors.set(actor, audit);
  }
  return audit;
};

/**
 * One audited request: what it is, who made it, and whether its event is written. Services get it in
 * their context (`ctx.scope`) and hand it to `inTransaction`, so the event lands in the change's own
 * transaction.
 */
export class AuditScope implements ChangeScope {
  private written = false;
  private writtenType: string | undefined;
  private projectId: string | null = null;
  private projectName: string | null | undefined;
  private orgId: string | null;
  private actor: AuditActor;
  private login: { identityId: string; authMethod: string } | undefined;
  /** Set when the change turned into another kind (a protected write opens a change request). */
  private eventType: string | undefined;
  private readonly metadata: Record<string, unknown>;
  private readonly ipAddress: string;
  private readonly userAgent: string | null;

  constructor(
    private readonly deps: AppDeps,
    private readonly spec: AuditSpec,
    req: Request,
  ) {
    this.metadata = requestMetadata(req);
    ({ ipAddress: this.ipAddress, userAgent: this.userAgent } = auditOriginOf(req));
    this.orgId = req.actor?.orgId ?? null;
    this.actor = req.actor ? auditActorOf(deps, req.actor) : PLATFORM_ACTOR;
  }

  /** The project whose permission the operation checked first: its event belongs to that project. */
  noteProject(projectId: string) {
    this.projectId ??= projectId;
  }

  note(details: ChangeNote) {
    // A request whose later transaction is another kind of change (a batch commit's folders written,
    // then its secrets proposed for review) records that one too.
    if (details.eventType && this.written && details.eventType !== this.writtenType) this.written = false;
    if (details.metadata) Object.assign(this.metadata, details.metadata);
    if (details.projectId) this.projectId = details.projectId;
    if (details.projectName !== undefined) this.projectName = details.projectName;
    if (details.orgId) this.orgId = details.orgId;
    if (details.eventType) this.eventType = details.eventType;
  }

  notePerson(person: { userId: string; email: string }, orgId: string) {
    this.noteActor(
      { type: "user", id: person.userId, metadata: { userId: person.userId, email: person.email } },
      orgId,
    );
  }

  noteActor(actor: AuditActor, orgId: string | null) {
    this.actor = actor;
    this.orgId = orgId;
  }

  noteLogin(identityId: string, authMethod: string, metadata: Record<string, unknown>) {
    this.login = { identityId, authMethod };
    Object.assign(this.metadata, metadata);
  }

  private event(type: string, metadata = this.metadata): AuditEventInput {
    return {
      orgId: this.orgId,
      projectId: this.projectId,
      projectName: this.projectName,
      actor: this.actor,
      type,
      metadata,
      ipAddress: this.ipAddress,
      userAgent: this.userAgent,
      createdAt: new Date(this.deps.clock.now()),
    };
  }

  private due() {
    if (this.written || this.spec.mode === "read") return false;
    return this.spec.mode === "change" || this.login !== undefined;
  }

  /** Called by `inTransaction` inside the request: the event commits or rolls back with the change. */
  async beforeCommit(trx: Tx) {
    if (!this.due()) return;
    if (this.login) {
      const subject = await findLoginSubject(trx, { identityId: this.login.identityId });
      if (subject) {
        const metadata = { identityId: subject.id, name: subject.name, authMethod: this.login.authMethod };
        this.noteActor({ type: "identity", id: subject.id, metadata }, subject.orgId);
      }
    }
    const type = this.eventType ?? this.spec.type;
    await writeAuditEvents(trx, this.deps.env.AUDIT_LOG_RETENTION_DAYS, [this.event(type)]);
    afterCommit(trx, () => {
      this.written = true;
      this.writtenType = type;
    });
  }

  /** When the response is sent: buffer a read, record a refused login, or catch a change made without a transaction. */
  finish(status: number, errorBody: ErrorBody) {
    if (status < 400) {
      if (this.spec.mode === "read") return bufferAuditEvent(this.deps, this.event(this.spec.type));
      if (!this.due()) return;
      // A change that used no transaction of its own: still recorded, right after it.
      this.deps.logger.warn({ event: this.spec.type }, "audit event written after its change, not with it");
      return writeAuditEventAlone(this.deps, this.event(this.spec.type));
    }
    if (this.spec.mode !== "login") return;
    const message = typeof errorBody?.message === "string" ? errorBody.message : "The request was not valid";
    const reasonCode = typeof errorBody?.error === "string" ? errorBody.error : String(status);
    return this.writeFailedLogin(reasonCode, message, invalidFieldsOf(status, errorBody));
  }

  private async writeFailedLogin(reasonCode: string, message: string, invalidFields: string[]) {
    // A field the request's validation refused is not recorded as if it named something.
    const named = (key: string) => {
      const value = this.metadata[key];
      return typeof value === "string" && !invalidFields.includes(key) ? value : undefined;
    };
    const clientId = named("clientId");
    const claimed = named("identityId");
    const subject = await findLoginSubject(this.deps.db, { identityId: claimed, clientId }).catch(() => undefined);
    if (subject) {
      this.actor = { type: "identity", id: subject.id, metadata: { identityId: subject.id, name: subject.name } };
      this.orgId = subject.orgId;
    }
    const metadata = {
      identityId: subject?.id ?? null,
      ...(clientId ? { clientId } : {}),
      reasonCode,
      message,
      ...(invalidFields.length > 0 ? { invalidFields } : {}),
    };
    await writeAuditEventAlone(this.deps, this.event(failedLoginType(this.spec.type), metadata));
  }
}

const MAX_INVALID_FIELDS = 10;
const MAX_FIELD_NAME = 128;

/** The top-level request fields (body, params or query) a 422's validation issues name. */
const invalidFieldsOf = (status: number, errorBody: ErrorBody): string[] => {
  if (status !== 422 || !Array.isArray(errorBody?.message)) return [];
  const fields = new Set<string>();
  for (const issue of errorBody.message as { path?: unknown }[]) {
    const [field] = Array.isArray(issue?.path) ? (issue.path as unknown[]) : [];
    if (typeof field === "string") fields.add(toWellFormedText(field.slice(0, MAX_FIELD_NAME)));
  }
  return [...fields].slice(0, MAX_INVALID_FIELDS);
};

/**
 * An event in a transaction of its own (a refused login, a change made without a transaction). If
 * it cannot be written whole, it is written without its metadata, marked so: an event is never
 * dropped, and a request cannot keep itself out of the audit log with what it sends.
 */
const writeAuditEventAlone = async (deps: AppDeps, event: AuditEventInput) => {
  const retention = deps.env.AUDIT_LOG_RETENTION_DAYS;
  const write = (chained: AuditEventInput) =>
    inTransaction(deps.db, (trx) => writeAuditEvents(trx, retention, [chained]));
  try {
    await write(event);
    return;
  } catch (error) {
    const code = (error as { code?: unknown } | undefined)?.code;
    deps.logger.warn(
      { event: event.type, code: typeof code === "string" ? code : undefined },
      "audit event could not be written whole; writing it without its metadata",
    );
  }
  await write(reducedAuditEvent(event)).catch((error: unknown) =>
    deps.logger.error({ err: error, event: event.type }, "audit event could not be written"),
  );
};

/**
 * Opens the audit scope of a recorded operation and attaches it to the response, where `contextOf`
 * finds it. Called after authentication, so the actor is known; the event is written with the
 * change, or when the response is sent (reads, refused logins).
 */
export const openAuditScope = (deps: AppDeps, spec: AuditSpec, req: Request, res: Response) => {
  const scope = new AuditScope(deps, spec, req);
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    void scope.finish(res.statusCode, res.locals.errorBody as ErrorBody);
  };
  res.on("finish", finish);
  // A response cut before its end (a stream its client left) still counts once its answer has begun.
  res.on("close", () => {
    if (res.headersSent) finish();
  });
  attachScope(res, scope);
};

/** The audit scope of the request behind `target`, if it records an event. */
export const currentAuditScope = (target: ChangeTarget): AuditScope | undefined => {
  const scope = changeScopeOf(target);
  return scope instanceof AuditScope ? scope : undefined;
};

/**
 * A change made by the platform itself (a background job), written in the change's transaction. In a
 * transaction a request opened, the request's own event covers the change, so nothing is added there.
 */
export const recordPlatformChange = async (trx: Tx, deps: AppDeps, event: PlatformChange) => {
  if (currentAuditScope(trx)) return;
  await writePlatformEvent(trx, deps, event);
};

/** Several platform changes committed together (a batch of a job's work), one event each. */
export const recordPlatformChanges = async (trx: Tx, deps: AppDeps, events: PlatformChange[]) => {
  if (events.length === 0) return;
  if (currentAuditScope(trx)) return;
  const createdAt = new Date(deps.clock.now());
  await writeAuditEvents(
    trx,
    deps.env.AUDIT_LOG_RETENTION_DAYS,
    events.map((change) => ({
      ...change,
      actor: { type: "platform" as const, id: null, metadata: {} },
      ipAddress: null,
      userAgent: null,
      createdAt,
    })),
  );
};

/** A platform change's event: no caller, no client address. */
const writePlatformEvent = (trx: Tx, deps: AppDeps, change: PlatformChange) =>
  writeAuditEvents(trx, deps.env.AUDIT_LOG_RETENTION_DAYS, [
    {
      ...change,
      actor: { type: "platform", id: null, metadata: {} },
      ipAddress: null,
      userAgent: null,
      createdAt: new Date(deps.clock.now()),
    },
  ]);

type PlatformChange = {
  orgId: string | null;
  projectId: string | null;
  type: PlatformEventType;
  metadata: Record<string, unknown>;
};

/** A background job's change: its event goes into the first transaction the change commits. */
class PlatformScope implements ChangeScope {
  private written = false;
  private writtenType: string | undefined;

  constructor(
    private readonly deps: AppDeps,
    private readonly change: PlatformChange,
  ) {}

  // A job's event is decided when the job starts the change: nothing is noted into it.
  note() {}
  noteProject() {}
  noteLogin() {}
  notePerson() {}

  async beforeCommit(trx: Tx) {
    if (this.written) return;
    await writePlatformEvent(trx, this.deps, this.change);
    afterCommit(trx, () => {
      this.written = true;
    });
  }
}

/**
 * Run a job's change so that its platform event commits with it (as a request's event does): `work`
 * gets a context whose transactions (`inTransaction(ctx, …)`) write the event.
 */
export const asPlatformChange = <T>(
  deps: AppDeps,
  change: PlatformChange,
  work: (ctx: ChangeContext) => Promise<T>,
): Promise<T> => work({ deps, scope: new PlatformScope(deps, change) });
