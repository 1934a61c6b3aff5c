import { initContract } from "@ts-rest/core";
import { z } from "zod";
import { TimestampSchema, UuidSchema } from "./common";

const c = initContract();

/** Actor types; Keyward's callers are identities, plus the platform for its own jobs. */
export const AUDIT_ACTOR_TYPES = [
  "platform",
  "kmipClient",
  "user",
  "service",
  "identity",
  "machine",
  "scimClient",
  "acmeProfile",
  "acmeAccount",
  "estAccount",
  "scepAccount",
  "unknownUser",
] as const;
export const AuditActorTypeSchema = z.enum(AUDIT_ACTOR_TYPES);
export type AuditActorType = z.infer<typeof AuditActorTypeSchema>;

export const USER_AGENT_TYPES = [
  "web",
  "cli",
  "k8-operator",
  "terraform",
  "other",
  "InfisicalPythonSDK",
  "InfisicalNodeSDK",
] as const;
export const UserAgentTypeSchema = z.enum(USER_AGENT_TYPES);
export type UserAgentType = z.infer<typeof UserAgentTypeSchema>;

export const AuditLogSchema = z.object({
  id: z.string(),
  orgId: z.string().nullable(),
  projectId: z.string().nullable(),
  projectName: z.string().nullable(),
  actor: z.object({ type: z.string(), metadata: z.record(z.unknown()) }),
  event: z.object({ type: z.string(), metadata: z.record(z.unknown()) }),
  ipAddress: z.string().nullable(),
  userAgent: z.string().nullable(),
  userAgentType: z.string().nullable(),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
  expiresAt: TimestampSchema.nullable(),
});
export type AuditLog = z.infer<typeof AuditLogSchema>;

const MAX_WINDOW_MS = 92 * 24 * 3600 * 1000;

/** `startDate`/`endDate` refinements, applied only when both are given. */
const checkDates = (query: { startDate?: string; endDate?: string }, ctx: z.RefinementCtx) => {
  if (!query.startDate || !query.endDate) return;
  const start = Date.parse(query.startDate);
  const end = Date.parse(query.endDate);
  if (end < start) {
    ctx.addIssue({ code: z.ZodIssueCode.custom, path: ["endDate"], message: "End date cannot be before start date" });
  } else if (end - start > MAX_WINDOW_MS) {
    ctx.addIssue({ code: z.ZodIssueCode.custom, path: ["endDate"], message: "Dates must be within 3 months" });
  }
};

const pairList = z
  .string()
  .max(2000)
  .transform((value) => {
    const pairs: Record<string, string> = {};
    for (const part of value.split(",")) {
      const at = part.indexOf("=");
      if (at <= 0 || at === part.length - 1) continue;
      pairs[part.slice(0, at).trim()] = part.slice(at + 1).trim();
    }
    return pairs;
  });

const pageQuery = {
  startDate: z.string().datetime({ offset: true }).optional(),
  endDate: z.string().datetime({ offset: true }).optional(),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
  /**
   * Keyward: the `nextCursor` of the previous page. Opaque; the page starts after the event it
   * names, with the same filters, so deep pages cost what the first one does. Not with `offset`.
   */
  cursor: z.string().trim().min(1).max(128).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(20),
  actor: z.string().trim().max(255).optional(),
  actorType: AuditActorTypeSchema.optional(),
  userAgentType: UserAgentTypeSchema.optional(),
};

export const ListAuditLogsQuerySchema = z
  .object({
    projectId: z.string().trim().max(64).optional(),
    environment: z.string().trim().max(64).optional(),
    secretPath: z
      .string()
      .trim()
      .max(1024)
      .transform((path) => (path.length > 1 && path.endsWith("/") ? path.replace(/\/+$/, "") || "/" : path))
      .optional(),
    secretKey: z.string().trim().max(256).optional(),
    eventType: z
      .string()
      .max(4000)
      .transform((value) =>
        value
          .split(",")
          .map((type) => type.trim())
          .filter(Boolean),
      )
      .optional(),
    eventMetadata: pairList.optional(),
    ...pageQuery,
  })
  .superRefine(checkDates);
export type ListAuditLogsQuery = z.infer<typeof ListAuditLogsQuerySchema>;

export const ListProjectAuditLogsQuerySchema = z
  .object({ eventType: z.string().trim().max(128).optional(), ...pageQuery })
  .superRefine(checkDates);

export const VerifyAuditLogsQuerySchema = z
  .object({
    projectId: z.string().trim().max(64).optional(),
    startDate: z.string().datetime({ offset: true }).optional(),
    endDate: z.string().datetime({ offset: true }).optional(),
  })
  .superRefine(checkDates);

export const AuditLogVerificationSchema = z.object({
  valid: z.boolean(),
  /** Events whose hash and link were checked. */
  checked: z.number(),
  firstInvalidEventId: z.string().optional(),
  /** Why the first invalid event failed: its content changed, its link broke, or events around it are missing. */
  reason: z.enum(["content-changed", "link-broken", "events-missing"]).optional(),
});
export type AuditLogVerification = z.infer<typeof AuditLogVerificationSchema>;

const logsBody = z.object({
  auditLogs: z.array(AuditLogSchema),
  /** Keyward: the `cursor` of the next page when this one is full, else null. */
  nextCursor: z.string().nullable(),
});

/** Audit log reads and the Keyward chain verification. */
export const auditLogsContract = c.router({
  list: {
    method: "GET",
    path: "/api/v1/organization/audit-logs",
    query: ListAuditLogsQuerySchema,
    responses: { 200: logsBody },
    summary: "List the organization's audit log, newest first",
  },
  eventTypes: {
    method: "GET",
    path: "/api/v1/organization/audit-logs/event-types",
    responses: { 200: z.object({ eventTypes: z.array(z.string()) }) },
    summary: "Every event type the API records, sorted: what the eventType filter accepts (Keyward)",
  },
  verify: {
    method: "GET",
    path: "/api/v1/organization/audit-logs/verify",
    query: VerifyAuditLogsQuerySchema,
    responses: { 200: AuditLogVerificationSchema },
    summary: "Walk the hash chains of a time range and report the first event that does not verify (Keyward)",
  },
  listProject: {
    method: "GET",
    path: "/api/v1/workspace/:projectId/audit-logs",
    pathParams: z.object({ projectId: z.string().trim().min(1).max(64) }),
    query: ListProjectAuditLogsQuerySchema,
    responses: { 200: logsBody },
    summary: "List a project's audit log (deprecated: use the organization route with projectId)",
    deprecated: true,
  },
  setProjectRetention: {
    method: "PUT",
    path: "/api/v1/workspace/:projectId/audit-logs-retention",
    pathParams: z.object({ projectId: z.string().trim().min(1).max(64) }),
    body: z.object({ auditLogsRetentionDays: z.number().int().min(1).max(3650).nullable() }),
    responses: { 200: z.object({ projectId: z.string(), auditLogsRetentionDays: z.number().nullable() }) },
    summary: "Set how long a project's audit events are kept (null: the instance default)",
  },
});

export const AUDIT_STREAM_PROVIDERS = ["custom"] as const;

const StreamHeaderSchema = z.object({
  key: z
    .string()
    .trim()
    .min(1)
    .max(256)
    .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, "Header names may only contain token characters"),
  value: z.string().max(4096),
});

export const CustomStreamCredentialsSchema = z.object({
  url: z.string().trim().url().max(2048),
  headers: z.array(StreamHeaderSchema).max(20).default([]),
});

export const AuditLogStreamSchema = z.object({
  id: UuidSchema,
  orgId: z.string(),
  provider: z.string(),
  /** Only the URL and header names: header values and the signing secret are never shown again. */
  credentials: z.object({ url: z.string(), headers: z.array(z.object({ key: z.string() })) }),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
  /** Keyward: events waiting for delivery, and the last delivery error if the receiver is failing. */
  pendingEvents: z.number(),
  lastError: z.string().nullable(),
});
export type AuditLogStream = z.infer<typeof AuditLogStreamSchema>;

const StreamParams = z.object({ provider: z.string().trim().min(1).max(32), logStreamId: UuidSchema });
const streamBody = z.object({ auditLogStream: AuditLogStreamSchema });

/** Audit log streams, provider `custom`; every delivery is signed (Keyward). */
export const auditLogStreamsContract = c.router({
  options: {
    method: "GET",
    path: "/api/v1/audit-log-streams/options",
    responses: { 200: z.object({ providerOptions: z.array(z.object({ provider: z.string(), name: z.string() })) }) },
    summary: "The stream providers this server delivers to",
  },
  list: {
    method: "GET",
    path: "/api/v1/audit-log-streams",
    responses: { 200: z.object({ auditLogStreams: z.array(AuditLogStreamSchema) }) },
    summary: "List the organization's audit log streams",
  },
  get: {
    method: "GET",
    path: "/api/v1/audit-log-streams/:provider/:logStreamId",
    pathParams: StreamParams,
    responses: { 200: streamBody },
    summary: "Read one audit log stream",
  },
  create: {
    method: "POST",
    path: "/api/v1/audit-log-streams/:provider",
    pathParams: z.object({ provider: z.string().trim().min(1).max(32) }),
    body: z.object({ credentials: CustomStreamCredentialsSchema }),
    responses: {
      200: z.object({
        auditLogStream: AuditLogStreamSchema,
        /** Shown once: the HMAC-SHA256 key of the `X-Keyward-Signature` header on every delivery. */
        signingSecret: z.string(),
      }),
    },
    summary: "Create a stream; the receiver is pinged first",
  },
  update: {
    method: "PATCH",
    path: "/api/v1/audit-log-streams/:provider/:logStreamId",
    pathParams: StreamParams,
    body: z.object({ credentials: CustomStreamCredentialsSchema.partial() }),
    responses: { 200: streamBody },
    summary: "Change a stream's URL or headers",
  },
  delete: {
    method: "DELETE",
    path: "/api/v1/audit-log-streams/:provider/:logStreamId",
    pathParams: StreamParams,
    body: c.noBody(),
    responses: { 200: streamBody },
    summary: "Delete a stream and drop its undelivered events",
  },
});
