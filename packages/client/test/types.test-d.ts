/**
 * Compile-time checks, run by `tsc` in the package's typecheck: every `@ts-expect-error` below must
 * be an error, or the typecheck fails.
 */
import type { ProjectPermissionRule } from "@keyward/contract";
import { createKeywardClient, type ErrorBody } from "../src/index";

export const rules: ProjectPermissionRule[] = [
  {
    subject: "secrets",
    action: ["readValue", "describeSecret"],
    conditions: { environment: "dev", secretPath: { $glob: "/app/**" } },
  },
  { subject: "identity", action: "read", conditions: { identityId: { $in: ["a", "b"] } } },
  {
    subject: "dynamic-secrets",
    action: "lease",
    conditions: { metadata: { $elemMatch: { key: "team", value: "core" } } },
  },
  { subject: "role", action: "read", inverted: true },
];

// @ts-expect-error "lease" is an action of dynamic-secrets, not of secrets
export const wrongAction: ProjectPermissionRule = {
  subject: "secrets",
  action: "lease",
};

export const wrongCondition: ProjectPermissionRule = {
  subject: "identity",
  action: "read",
  // @ts-expect-error identity rules have no secretPath condition
  conditions: { secretPath: "/" },
};

export const wrongOperator: ProjectPermissionRule = {
  subject: "secrets",
  action: "readValue",
  // @ts-expect-error secretTags takes $in or $all, not a plain string
  conditions: { secretTags: "prod" },
};

// @ts-expect-error role rules take no conditions
export const noConditions: ProjectPermissionRule = {
  subject: "role",
  action: "read",
  conditions: { environment: "dev" },
};

export const errorBodiesNarrow = async () => {
  const client = createKeywardClient({ baseUrl: "http://localhost" });
  const response = await client.projects.list();
  if (response.status !== 200) {
    const body: ErrorBody = response.body;
    // @ts-expect-error 418 is not a status the server sends
    if (response.status === 418) return body;
    const conflict = response.status === 409;
    return conflict;
  }
  return response.body.projects;
};

export const retryLaterNarrows = async () => {
  const client = createKeywardClient({ baseUrl: "http://localhost" });
  const identities = await client.identities.list({ query: {} });
  // Every route touching the database may answer 503.
  const unavailable: ErrorBody | undefined = identities.status === 503 ? identities.body : undefined;
  // @ts-expect-error identities are not rate-limited: no 429 there
  const notLimited = identities.status === 429;
  const login = await client.universalAuth.login({ body: { clientId: "id", clientSecret: "secret" } });
  const limited: ErrorBody | undefined = login.status === 429 ? login.body : undefined;
  return [unavailable, notLimited, limited];
};
