import type { z } from "zod";
import type { ProjectSchema, SecretReadSchema } from "@keyward/contract";

export type Project = z.infer<typeof ProjectSchema>;
export type Secret = z.infer<typeof SecretReadSchema>;

/** Where in a project a screen looks: one environment and one folder path. */
export type Scope = { projectId: string; environment: string; path: string };

export const joinPath = (path: string, name: string) => `${path.replace(/\/+$/, "")}/${name}`;
