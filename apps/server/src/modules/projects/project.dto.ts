import type { ProjectType } from "@keyward/contract";
import { toIso } from "../../lib/dates";
import type { ProjectRow } from "../authz/project-access";
import type { EnvironmentRow } from "./project.repository";

export const toEnvironmentDto = (row: EnvironmentRow) => ({
  id: row.id,
  name: row.name,
  slug: row.slug,
  position: row.position,
  projectId: row.project_id,
  createdAt: toIso(row.created_at),
  updatedAt: toIso(row.updated_at),
});

export const toProjectDto = (row: ProjectRow, environments: EnvironmentRow[]) => ({
  id: row.id,
  name: row.name,
  slug: row.slug,
  description: row.description,
  type: row.type as ProjectType,
  orgId: row.org_id,
  environments: environments.map((e) => ({ id: e.id, name: e.name, slug: e.slug, position: e.position })),
  createdAt: toIso(row.created_at),
  updatedAt: toIso(row.updated_at),
});
