import type { Request } from "express";

/** The base URL clients reach this server at: PUBLIC_URL when set, else the request's own scheme and host. */
export const publicBaseOf = (publicUrl: string | undefined, req: Request) =>
  publicUrl ?? `${req.protocol}://${req.get("host") ?? "localhost"}`;
