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

export const EventRegistrationSchema = z.object({
  event: z.enum(SECRET_EVENT_TYPES),
  conditions: z.object({ environmentSlug: EnvironmentSlugInput, secretPath: EventPathSchema.default("/") }).optional(),
});
export type EventRegistration = z.infer<typeof EventRegistrationSchema>;

export const eventsContract = c.router({
  subscribeProjectEvents: {
    method: "POST",
    path: "/api/v1/events/subscribe/project-events",
    headers: z.object({ "last-event-id": z.string().max(32).optional() }),
    body: z.object({
      projectId: ProjectIdInput,
      register: z.array(EventRegistrationSchema).min(1).max(10),
    }),
    // 429: the caller (or this instance) has as many open streams as it may.
    responses: rateLimited({ 200: c.otherResponse({ contentType: "text/event-stream", body: z.string() }) }),
    summary:
      "A Server-Sent Events stream of the project's secret changes (names only, never values) for the registered environments and paths. " +
      "Each event has an increasing id; a client reconnecting with Last-Event-ID gets what it missed, or a `resync` event when that is past the replay window.",
  },
});
