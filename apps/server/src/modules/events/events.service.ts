import type { Response } from "express";
import type { EventRegistration } from "@keyward/contract";
import type { RequestContext } from "../../context";
import { PermissionDeniedError, TooManyRequestsError } from "../../errors";
import { SseStream, takeOverResponse, type SseEvent } from "../../http/sse";
import type { Ability } from "../../permissions";
import { getProjectPermission } from "../authz/project-access";
import { SECRET_MANAGER } from "../folders/folder.service";
import { authenticateBearer } from "../sessions/session.service";
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
  const stream = new EventStream(ctx, subscription, ability, actorKey);
  return takeOverResponse((res) => stream.serve(res));
};

/**
 * The stream itself, on the response ts-rest hands over: its place in the project's feed, then
 * headers, a `: connected` comment, the missed events of a reconnecting client (or `resync`), then
 * each visible event as it is committed, and a `ping` every EVENTS_PING_INTERVAL_S. At the first ping
 * after EVENTS_RECHECK_INTERVAL_S the token is authenticated again as the route entry does it, and the
 * rights are checked again: a revoked or expired token, or a right taken away, ends the stream with an
 * `error` event.
 */
class EventStream {
  constructor(
    private readonly ctx: RequestContext,
    private readonly subscription: Subscription,
    private ability: Ability,
    private readonly actorKey: string,
  ) {}

  async serve(res: Response) {
    const { deps } = this.ctx;
    const hub = deps.eventHub;
    const stream = new SseStream(res, {
      maxBufferedBytes: deps.env.EVENTS_MAX_BUFFERED_BYTES,
      // A reader that does not keep up is dropped; it reconnects with its Last-Event-ID.
      onSlowReader: () => deps.logger.info({ actor: this.actorKey }, "events stream: reader too slow, dropped"),
    });
    let replaying = true;
    const backlog: EventRow[] = [];
    const publish = (row: EventRow) => {
      subscriber.lastSeq = row.seq;
      const data = visibleEventData(this.subscription.registrations, this.ability, row);
      if (data !== undefined) stream.send({ id: row.seq, event: row.event_type, data });
    };
    const subscriber: Subscriber = {
      projectId: this.subscription.projectId,
      actorKey: this.actorKey,
      lastSeq: -1,
      deliver: (row) => (replaying ? backlog.push(row) : publish(row)),
      end: (reason) => {
        stream.send({ event: "error", data: JSON.stringify({ message: reason }) });
        stream.end();
      },
    };
    stream.onClose(() => hub.remove(subscriber));
    // The stream's place in the log is fixed before the client hears it is connected: a client that
    // reads the secrets once connected then misses no change committed after that read.
    let joinedAt: number;
    try {
      joinedAt = await hub.add(deps, subscriber);
    } catch (error) {
      deps.logger.warn({ err: error }, "events stream: joining the project's feed failed");
      hub.remove(subscriber);
      stream.refuse(
        503,
        { "Retry-After": "1" },
        {
          reqId: this.ctx.reqId,
          statusCode: 503,
          error: "ServiceUnavailable",
          message: "The event log could not be read; please retry shortly",
        },
      );
      return;
    }
    if (stream.closed) {
      hub.remove(subscriber);
      return;
    }
    stream.open({ keepAlive: !deps.lifecycle.isDraining() });
    stream.comment("connected");
    try {
      await this.catchUp(joinedAt, publish, (event) => stream.send(event));
      subscriber.lastSeq = Math.max(subscriber.lastSeq, joinedAt);
      replaying = false;
      for (const row of backlog.splice(0)) if (row.seq > subscriber.lastSeq) publish(row);
    } catch (error) {
      deps.logger.warn({ err: error }, "events stream: catching up failed");
      subscriber.end("The event log could not be read");
      return;
    }
    let checkedAt = deps.clock.now();
    stream.heartbeat(deps.env.EVENTS_PING_INTERVAL_S * 1_000, { event: "ping" }, async () => {
      if (deps.clock.now() - checkedAt < deps.env.EVENTS_RECHECK_INTERVAL_S * 1_000) return true;
      checkedAt = deps.clock.now();
      try {
        await this.recheck();
        return true;
      } catch {
        subscriber.end(REVOKED);
        return false;
      }
    });
  }

  /** A reconnecting client's missed events, from the log; `resync` when they are no longer all there. */
  private async catchUp(joinedAt: number, publish: (row: EventRow) => void, send: (event: SseEvent) => void) {
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
      send({
        id: joinedAt,
        event: "resync",
        data: JSON.stringify({
          message: "The events since the given Last-Event-ID are no longer kept: read the secrets again.",
          lastEventId: joinedAt,
        }),
      });
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
    const actor = await authenticateBearer(this.ctx.deps, this.subscription.authorization, this.ctx.clientIp);
    const { ability } = await getProjectPermission({ ...this.ctx, actor }, this.subscription.projectId, SECRET_MANAGER);
    assertMaySubscribe(ability, this.subscription.registrations);
    this.ability = ability;
  }
}
