import { initContract } from "@ts-rest/core";
import { z } from "zod";
import { MessageSchema, TimestampSchema } from "./common";

const c = initContract();

export const OrganizationSchema = z.object({ id: z.string(), name: z.string(), slug: z.string() });

const IssuedIdentitySchema = z.object({
  id: z.string(),
  name: z.string(),
  credentials: z.object({ token: z.string() }),
});

export const bootstrapContract = c.router({
  status: {
    method: "GET",
    path: "/api/status",
    metadata: { public: true },
    responses: { 200: z.object({ status: z.literal("ok"), date: TimestampSchema, ready: z.boolean() }) },
    summary: "Liveness, and whether the database answers",
  },
  config: {
    method: "GET",
    path: "/api/v1/admin/config",
    metadata: { public: true },
    responses: { 200: z.object({ config: z.object({ initialized: z.boolean() }) }) },
    summary: "Whether the instance has been set up (bootstrapped)",
  },
  bootstrap: {
    method: "POST",
    path: "/api/v1/admin/bootstrap",
    metadata: { public: true },
    body: z.object({
      email: z.string().trim().email().max(320),
      /** Accepted for compatibility and ignored: people sign in through their organization's provider. */
      password: z.string().trim().min(1).max(256).optional(),
      organization: z.string().trim().min(1).max(64),
    }),
    responses: {
      200: MessageSchema.extend({
        user: z.object({
          id: z.string(),
          username: z.string(),
          email: z.string(),
          firstName: z.string(),
          lastName: z.string(),
          superAdmin: z.boolean(),
        }),
        organization: OrganizationSchema,
        identity: IssuedIdentitySchema,
        /** The returned token never expires: how to keep it and how to replace it. */
        warning: z.string(),
      }),
    },
    summary: "Set up the instance once: first organization and its admin identity token",
  },
  createOrganization: {
    method: "POST",
    path: "/api/v1/admin/organizations",
    body: z.object({ name: z.string().trim().min(1).max(64) }),
    responses: { 200: z.object({ organization: OrganizationSchema, identity: IssuedIdentitySchema }) },
    summary: "Instance admins: create another organization with its own admin identity token",
  },
});
