import { createParser, type EventSourceMessage } from "eventsource-parser";
import { createBackoff, sleep } from "../agent/backoff";

/** The secret events a client can follow. */
export const SECRET_EVENTS = ["secret:create", "secret:update", "secret:delete", "secret:import-mutation"] as const;
export type SecretEvent = (typeof SECRET_EVENTS)[number];

/** One registration of the subscribe body: an event in a folder (`/**` at the end: and all below). */
export type Registration = { event: SecretEvent; conditions: { environmentSlug: string; secretPath: string } };

/** The server takes at most this many registrations on one stream. */
export const MAX_REGISTRATIONS = 10;

/** What a change event says: where something changed (never a value). */
export type ChangedPlace = { environment: string; secretPath: string; secretKey?: string };

export type StreamHandlers = {
  /** The stream is open; `resumed` when it reopened after a drop with a Last-Event-ID. */
  onOpen: (resumed: boolean) => void;
  onChange: (event: SecretEvent, places: ChangedPlace[]) => void;
  /** The server could not replay what was missed: everything followed must be read again. */
  onResync: () => void;
  /** The stream is not (or no longer) open; `reason` is for the log. */
  onDown: (reason: string) => void;
  /** 401: the token needs renewing (or a new login) before the next try. */
  onAuthProblem: (reason: string) => Promise<void>;
};

export type StreamOptions = {
  url: string;
  projectId: string;
  registrations: Registration[];
  token: () => string;
  handlers: StreamHandlers;
  /** Without any bytes for this long (pings come every 15 s) the connection counts as dead. */
  idleTimeoutMs?: number;
};

export type EventStream = { stop: () => void; readonly connected: boolean };

type ErrorBody = { statusCode?: number; message?: unknown; error?: string };

const messageOf = async (response: Response) => {
  try {
    const body = (await response.json()) as ErrorBody;
    return typeof body.message === "string" ? body.message : response.statusText;
  } catch {
    return response.statusText;
  }
};

export const placesOf = (data: string): ChangedPlace[] => {
  try {
    const parsed = JSON.parse(data) as { data?: { payload?: unknown } };
    const payload = parsed.data?.payload;
    // Secret events carry a list of places; an import mutation carries its one folder as an object.
    const items: unknown[] = Array.isArray(payload) ? payload : typeof payload === "object" && payload ? [payload] : [];
    return items.flatMap((item: unknown) => {
      const place = item as Partial<ChangedPlace>;
      return typeof place.environment === "string" && typeof place.secretPath === "string"
        ? [{ environment: place.environment, secretPath: place.secretPath, secretKey: place.secretKey }]
        : [];
    });
  } catch {
    return [];
  }
};

const isSecretEvent = (name: string | undefined): name is SecretEvent =>
  (SECRET_EVENTS as readonly string[]).includes(name ?? "");

/**
 * Follows a project's events stream for as long as it is not stopped: connects, reads frames,
 * reconnects after any drop with capped exponential backoff and the last event id it saw, so the
 * server replays what was missed (or says `resync` when it cannot).
 */
export const followProjectEvents = (options: StreamOptions): EventStream => {
  const { handlers } = options;
  const idleTimeoutMs = options.idleTimeoutMs ?? 45_000;
  const stopper = new AbortController();
  const backoff = createBackoff();
  let lastEventId: string | undefined;
  let connected = false;
  let opened = false;

  const down = (reason: string) => {
    if (stopper.signal.aborted) return;
    connected = false;
    handlers.onDown(reason);
  };

  /** One connection, until it ends; resolves with the reason for the log, or throws for a fetch failure. */
  const connectOnce = async (): Promise<{ reason: string; auth?: boolean; slow?: boolean }> => {
    const attempt = new AbortController();
    const abortAttempt = () => attempt.abort();
    stopper.signal.addEventListener("abort", abortAttempt, { once: true });
    let idle: NodeJS.Timeout | undefined;
    const armIdle = () => {
      clearTimeout(idle);
      idle = setTimeout(() => attempt.abort(), idleTimeoutMs);
    };
    try {
      armIdle();
      const response = await fetch(`${options.url.replace(/\/+$/, "")}/api/v1/events/subscribe/project-events`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${options.token()}`,
          accept: "text/event-stream",
          "content-type": "application/json",
          ...(lastEventId === undefined ? {} : { "last-event-id": lastEventId }),
        },
        body: JSON.stringify({ projectId: options.projectId, register: options.registrations }),
        signal: attempt.signal,
      });
      if (response.status === 401) return { reason: `401: ${await messageOf(response)}`, auth: true };
      if (!response.ok || !response.body) {
        // 403/404/422 will not mend by themselves soon: try again, but slowly.
        const slow = response.status !== 429 && response.status < 500;
        return { reason: `${response.status}: ${await messageOf(response)}`, slow };
      }
      const resumed = opened && lastEventId !== undefined;
      opened = true;
      connected = true;
      backoff.reset();
      handlers.onOpen(resumed);
      let ended: { reason: string; auth?: boolean } | undefined;
      const parser = createParser({
        onEvent: (message: EventSourceMessage) => {
          if (message.id !== undefined) lastEventId = message.id;
          if (isSecretEvent(message.event)) handlers.onChange(message.event, placesOf(message.data));
          else if (message.event === "resync") handlers.onResync();
          else if (message.event === "error") {
            let text = "the server ended the stream";
            try {
              const body = JSON.parse(message.data) as { message?: unknown };
              if (typeof body.message === "string") text = body.message;
            } catch {
              // Not JSON: the generic text will do.
            }
            // The token may have ended, a right been taken away, or the server be shutting down:
            // reconnecting tells which (a 401 then renews the token), without renewing on every shutdown.
            ended = { reason: `error event: ${text}` };
          }
        },
      });
      const decoder = new TextDecoder();
      for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
        armIdle();
        parser.feed(decoder.decode(chunk, { stream: true }));
      }
      return ended ?? { reason: "the server closed the stream" };
    } finally {
      clearTimeout(idle);
      stopper.signal.removeEventListener("abort", abortAttempt);
    }
  };

  const loop = async () => {
    while (!stopper.signal.aborted) {
      let outcome: { reason: string; auth?: boolean; slow?: boolean };
      try {
        outcome = await connectOnce();
      } catch (error) {
        const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : undefined;
        outcome = { reason: cause ?? (error instanceof Error ? error.message : String(error)) };
      }
      if (stopper.signal.aborted) return;
      down(outcome.reason);
      if (outcome.auth) {
        try {
          await handlers.onAuthProblem(outcome.reason);
        } catch {
          // The owner logs its own failures; the backoff below paces the next try.
        }
      }
      await sleep(outcome.slow ? 30_000 : backoff.next(), stopper.signal);
    }
  };
  void loop();

  return {
    stop: () => stopper.abort(),
    get connected() {
      return connected;
    },
  };
};

/** Whether a change in `place` concerns the folder `path` of `environment` (`recursive`: or below it). */
export const placeMatches = (place: ChangedPlace, environment: string, path: string, recursive = false) => {
  if (place.environment !== environment) return false;
  const norm = (p: string) => `/${p.split("/").filter(Boolean).join("/")}`;
  const changed = norm(place.secretPath);
  const followed = norm(path);
  if (changed === followed) return true;
  return recursive && (followed === "/" || changed.startsWith(`${followed}/`));
};

/**
 * The registrations for a set of followed folders, in groups of at most ten (one stream each). Each
 * folder needs the four secret events; past two folders an environment is followed as a whole
 * (`/**`) and the client filters what comes, which keeps one stream per project in the usual case.
 */
export const planRegistrations = (folders: { environment: string; path: string; recursive?: boolean }[]) => {
  const keyOf = (f: { environment: string; path: string; recursive?: boolean }) =>
    `${f.environment}\u0000${f.path}${f.recursive ? "/**" : ""}`;
  const unique = [...new Map(folders.map((f) => [keyOf(f), f])).values()];
  const perFolder = SECRET_EVENTS.length;
  const places =
    unique.length * perFolder <= MAX_REGISTRATIONS
      ? unique.map((f) => ({
          environmentSlug: f.environment,
          secretPath: f.recursive ? `${f.path.replace(/\/+$/, "")}/**` : f.path,
        }))
      : [...new Set(unique.map((f) => f.environment))].map((environment) => ({
          environmentSlug: environment,
          secretPath: "/**",
        }));
  const registrations: Registration[] = places.flatMap((conditions) =>
    SECRET_EVENTS.map((event) => ({ event, conditions })),
  );
  const groups: Registration[][] = [];
  for (let i = 0; i < registrations.length; i += MAX_REGISTRATIONS) {
    groups.push(registrations.slice(i, i + MAX_REGISTRATIONS));
  }
  return groups;
};
