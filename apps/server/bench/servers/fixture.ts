import type { Identity } from "@keyward/contract";

/** The response the baselines return: the shape of GET /api/v1/identities/:id. */
export const IDENTITY_FIXTURE: Identity = {
  id: "6f1c1d2e-8a4b-4c3d-9e2f-1a2b3c4d5e6f",
  name: "bench-identity",
  orgId: "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
  projectId: null,
  role: "member",
  hasDeleteProtection: false,
  authMethods: ["token-auth"],
  activeLockoutAuthMethods: [],
  metadata: [],
  createdAt: "2026-01-01T00:00:00.000Z",
  updatedAt: "2026-01-01T00:00:00.000Z",
};
