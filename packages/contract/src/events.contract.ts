import { initContract } from "@ts-rest/core";
import { z } from "zod";
import { rateLimited } from "./common";
import { EnvironmentSlugInput, ProjectIdInput } from "./folders.contract";

const c = initContract();

/** The secret changes a stream can follow. */
export const SECRET_EVENT_TYPES = [
  "secret:create",
  "secret:update",
  "secret:delete",
  "secret:import-mutation",
] as const;
export type SecretEventType = (typeof SECRET_EVENT_TYPES)[number];

/**
 * Where a registration listens: a folder path, normalised to "/a/b". It means that folder and the
 * folders below it; a trailing `/**` (or `/*`), as the Kubernetes operator sends for recursive syncs,
 * means the same.
 */
export const EventPathSchema = z
  .string()
  .trim()
  .max(1_024)
  .transform((path) => {
    const segments = path.split("/").filter((segment) => segment.length > 0);
    while (segments.length > 0 && (segments.at(-1) === "**" || segments.at(-1) === "*")) segments.pop();
    return `/${segments.join("/")}`;
  })
  .refine(
    (path) =>
      path === "/" ||
      path
        .slice(1)
        .split("/")
        .every((segment) => /^[A-Za-z0-9_-]+$/.test(segment) && segment.length <= 64),
    "Invalid path: every segment must be a folder name; only a trailing /** or /* may follow",
  );

const EventConditionsSchema = z.object({
  environmentSlug: EnvironmentSlugInput,
  secretPath: EventPathSchema.default("/"),
});

/**
 * One registration: an event type (none: every type the caller may subscribe to) where it listens
 * (no conditions: the whole project). The conditions may also be given flat on the entry
 * (`{environmentSlug, secretPath}`), as some `infisical proxy` versions send them; `conditions` wins
 * when both are there.
 */
export const EventRegistrationSchema = z
  .object({
    event: z.enum(SECRET_EVENT_TYPES).optional(),
    conditions: EventConditionsSchema.optional(),
    environmentSlug: EnvironmentSlugInput.optional(),
    secretPath: EventPathSchema.optional(),
  })
  .refine((entry) => entry.secretPath === undefined || entry.environmentSlug !== undefined, {
    message: "environmentSlug is required with secretPath",
    path: ["environmentSlug"],
  })
  .transform(({ event, conditions, environmentSlug, secretPath }) => ({
    event,
    conditions:
      conditions ?? (environmentSlug === undefined ? undefined : { environmentSlug, secretPath: secretPath ?? "/" }),
  }));
export type EventRegistration = z.infer<typeof EventRegistrationSchema>;

export const eventsContract = c.router({
  subscribeProjectEvents: {
    method: "POST",
    path: "/api/v1/events/subscribe/project-events",
    headers: z.object({ "last-event-id": z.string().max(32).optional() }),
    body: z.object({
      projectId: ProjectIdInput,
      // None: every event of the whole project, as far as the caller may subscribe and describe.
      register: z.array(EventRegistrationSchema).min(1).max(10).optional(),
    }),
    // 429: the caller (or this instance) has as many open streams as it may.
    responses: rateLimited({ 200: c.otherResponse({ contentType: "text/event-stream", body: z.string() }) }),
    summary:
      "A Server-Sent Events stream of the project's secret changes (names only, never values) for the registered environments and paths " +
      "(no `register`: the whole project; a registration without `event`: every event type), only those the caller may subscribe to and describe. " +
      "Each event has an increasing id; a client reconnecting with Last-Event-ID gets what it missed, or a `resync` event when that is past the replay window.",
  },
});
