import { Stream } from "node:stream";
import type { Response } from "express";
import type { EventRegistration } from "@keyward/contract";
import type { Actor, RequestContext } from "../../context";
import { PermissionDeniedError, TooManyRequestsError } from "../../errors";
import type { Ability } from "../../permissions";
import { authenticate } from "../access-tokens/access-token.service";
import { getProjectPermission } from "../authz/project-access";
import { SECRET_MANAGER } from "../folders/folder.service";
import { authenticateSession } from "../sessions/session.service";
import { isSessionAuthorization } from "../sessions/session-token";
import type { Subscriber } from "./event-hub";
import { WHOLE_PROJECT, missingSubscribeAction, visibleEventData } from "./event-filter";
import { findOldestEvent, listEventsAfter, type EventRow } from "./secret-events.repository";

/** A reconnecting client further behind than this many events is told to resync rather than replayed. */
const MAX_REPLAY = 10_000;

const REVOKED = "Permission denied or refresh failed";

type Subscription = {
  projectId: string;
  registrations: readonly EventRegistration[];
  lastEventId: string | undefined;
  authorization: string | undefined;
};

/** Every registration needs its `secret-events` right. */
const assertMaySubscribe = (ability: Ability, registrations: readonly EventRegistration[]) => {
  for (const registration of registrations) {
    const missing = missingSubscribeAction(ability, registration);
    if (missing !== undefined) throw new PermissionDeniedError(missing, "secret-events", []);
  }
};

const reauthenticate = (ctx: RequestContext, authorization: string | undefined): Promise<Actor> =>
  isSessionAuthorization(authorization)
    ? authenticateSession(ctx.deps, authorization)
    : authenticate(ctx.deps, authorization, ctx.clientIp);

const frame = (fields: { id?: number; event: string; data?: string }) =>
  `${fields.id !== undefined ? `id: ${fields.id}\n` : ""}event: ${fields.event}\n${
    fields.data !== undefined ? `data: ${fields.data}\n` : ""
  }\n`;

/**
 * POST /api/v1/events/subscribe/project-events. Checks the project (404 for another organization's),
 * each registration's right (403) and the stream bounds (429) as a normal JSON answer; then answers
 * with a body that, piped into the response, holds the stream open. No registrations: the whole project.
 */
export const subscribeProjectEvents = async (
  ctx: RequestContext,
  request: Omit<Subscription, "registrations"> & { registrations: readonly EventRegistration[] | undefined },
) => {
  const subscription: Subscription = { ...request, registrations: request.registrations ?? [WHOLE_PROJECT] };
  const { ability } = await getProjectPermission(ctx, subscription.projectId, SECRET_MANAGER);
  assertMaySubscribe(ability, subscription.registrations);
  const actorKey = `${ctx.actor.type}:${ctx.actor.id}`;
  const refusal = ctx.deps.eventHub.refusal(ctx.deps, actorKey);
  if (refusal) throw new TooManyRequestsError(5, refusal);
  return new EventStreamBody(ctx, subscription, ability, actorKey);
};

/**
 * The stream itself. ts-rest pipes a stream body into the response; this one takes the response
 * over: its place in the project's feed, then headers, a `: connected` comment, the missed events of a reconnecting client (or `resync`),
 * then each visible event as it is committed, and a `ping` every EVENTS_PING_INTERVAL_S. At the
 * first ping after EVENTS_RECHECK_INTERVAL_S the token and the rights are checked again: a revoked
 * or expired token, or a right taken away, ends the stream with an `error` event.
 */
class EventStreamBody extends Stream {
  constructor(
    private readonly ctx: RequestContext,
    private readonly subscription: Subscription,
    private ability: Ability,
    private readonly actorKey: string,
  ) {
    super();
  }

  override pipe<W extends NodeJS.WritableStream>(destination: W): W {
    void this.serve(destination as unknown as Response);
    return destination;
  }

  private async serve(res: Response) {
    const { deps } = this.ctx;
    const hub = deps.eventHub;
    let closed = false;
    let replaying = true;
    const backlog: EventRow[] = [];
    let timer: NodeJS.Timeout | undefined;
    const send = (text: string) => {
      if (closed) return;
      res.write(text);
      // A reader that does not keep up is dropped; it reconnects with its Last-Event-ID.
      if (res.writableLength > deps.env.EVENTS_MAX_BUFFERED_BYTES) {
        deps.logger.info({ actor: this.actorKey }, "events stream: reader too slow, dropped");
        res.destroy();
      }
    };
    const publish = (row: EventRow) => {
      subscriber.lastSeq = row.seq;
      const data = visibleEventData(this.subscription.registrations, this.ability, row);
      if (data !== undefined) send(frame({ id: row.seq, event: row.event_type, data }));
    };
    const subscriber: Subscriber = {
      projectId: this.subscription.projectId,
      actorKey: this.actorKey,
      lastSeq: -1,
      deliver: (row) => (replaying ? backlog.push(row) : publish(row)),
      end: (reason) => {
        send(frame({ event: "error", data: JSON.stringify({ message: reason }) }));
        res.end();
      },
    };
    res.on("close", () => {
      closed = true;
      clearTimeout(timer);
      hub.remove(subscriber);
    });
    // The stream's place in the log is fixed before the client hears it is connected: a client that
    // reads the secrets once connected then misses no change committed after that read.
    let joinedAt: number;
    try {
      joinedAt = await hub.add(deps, subscriber);
    } catch (error) {
      deps.logger.warn({ err: error }, "events stream: joining the project's feed failed");
      hub.remove(subscriber);
      if (!closed) {
        res.writeHead(503, { "Content-Type": "application/json", "Retry-After": "1" });
        res.end(
          JSON.stringify({
            reqId: this.ctx.reqId,
            statusCode: 503,
            error: "ServiceUnavailable",
            message: "The event log could not be read; please retry shortly",
          }),
        );
      }
      return;
    }
    if (closed) {
      hub.remove(subscriber);
      return;
    }
    res.writeHead(200, {
      "Content-Type": "text/event-stream",
      "Cache-Control": "no-cache",
      "X-Accel-Buffering": "no",
      ...(deps.lifecycle.isDraining() ? {} : { Connection: "keep-alive" }),
    });
    res.write(": connected\n\n");
    try {
      await this.catchUp(joinedAt, publish, send);
      subscriber.lastSeq = Math.max(subscriber.lastSeq, joinedAt);
      replaying = false;
      for (const row of backlog.splice(0)) if (row.seq > subscriber.lastSeq) publish(row);
    } catch (error) {
      deps.logger.warn({ err: error }, "events stream: catching up failed");
      subscriber.end("The event log could not be read");
      return;
    }
    const pingMs = deps.env.EVENTS_PING_INTERVAL_S * 1_000;
    let checkedAt = deps.clock.now();
    const tick = () => {
      if (closed) return;
      send(frame({ event: "ping" }));
      if (deps.clock.now() - checkedAt < deps.env.EVENTS_RECHECK_INTERVAL_S * 1_000) {
        timer = setTimeout(tick, pingMs);
        return;
      }
      checkedAt = deps.clock.now();
      this.recheck().then(
        () => {
          if (!closed) timer = setTimeout(tick, pingMs);
        },
        () => subscriber.end(REVOKED),
      );
    };
    timer = setTimeout(tick, pingMs);
  }

  /** A reconnecting client's missed events, from the log; `resync` when they are no longer all there. */
  private async catchUp(joinedAt: number, publish: (row: EventRow) => void, send: (text: string) => void) {
    const header = this.subscription.lastEventId;
    if (header === undefined) return;
    const last = /^\d{1,15}$/.test(header.trim()) ? Number(header.trim()) : Number.NaN;
    if (last === joinedAt) return;
    const oldest =
      Number.isNaN(last) || last > joinedAt
        ? undefined
        : await findOldestEvent(this.ctx.deps.db, this.subscription.projectId);
    const kept = oldest !== undefined && oldest <= last + 1 && joinedAt - last <= MAX_REPLAY;
    if (!kept) {
      send(
        frame({
          id: joinedAt,
          event: "resync",
          data: JSON.stringify({
            message: "The events since the given Last-Event-ID are no longer kept: read the secrets again.",
            lastEventId: joinedAt,
          }),
        }),
      );
      return;
    }
    for (let after = last; after < joinedAt;) {
      const rows = await listEventsAfter(this.ctx.deps.db, this.subscription.projectId, after, 500);
      if (rows.length === 0) break;
      for (const row of rows) if (row.seq <= joinedAt) publish(row);
      after = rows.at(-1)!.seq;
    }
  }

  /** Throws unless the token is still valid and still holds every registration's right; refreshes the ability. */
  private async recheck() {
    const actor = await reauthenticate(this.ctx, this.subscription.authorization);
    const { ability } = await getProjectPermission({ ...this.ctx, actor }, this.subscription.projectId, SECRET_MANAGER);
    assertMaySubscribe(ability, this.subscription.registrations);
    this.ability = ability;
  }
}
