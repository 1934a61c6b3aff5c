import { expect } from "vitest";
import { expectOk, type Tenant } from "../helpers/tenant";

/** A SCIM token of the tenant's organization, created by its admin. */
export const createScimToken = async (tenant: Tenant, ttlDays = 0) => {
  const body = { organizationId: tenant.orgId, description: "identity provider", ttlDays };
  const { scimToken } = expectOk(await tenant.admin.scim.createScimToken({ body }));
  expect(scimToken).toMatch(/^kws_/);
  return scimToken;
};

/** What SCIM answers hold (a resource, a list or an error), as far as the tests read them. */
export type ScimBody = {
  [key: string]: unknown;
  id: string;
  userName: string;
  displayName: string;
  active: boolean;
  name: { givenName: string; familyName: string };
  emails: { value: string; primary: boolean; type: string }[];
  members?: { value: string; display: string }[];
  Resources: ScimBody[];
  totalResults: number;
  itemsPerPage: number;
  startIndex: number;
  status: string;
  detail: string;
  scimType?: string;
};

export type ScimAnswer = { status: number; contentType: string | null; body: ScimBody };

/** One SCIM request as an identity provider sends it: `application/scim+json`, the token as a bearer. */
export const scim = async (
  tenant: Tenant,
  token: string | undefined,
  method: string,
  path: string,
  body?: unknown,
): Promise<ScimAnswer> => {
  const headers: Record<string, string> = { accept: "application/scim+json" };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers["content-type"] = "application/scim+json";
  const response = await fetch(`${tenant.app.baseUrl}/api/v1/scim${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return {
    status: response.status,
    contentType: response.headers.get("content-type"),
    body: (text ? JSON.parse(text) : {}) as ScimBody,
  };
};

export const USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User";
export const GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group";
export const PATCH_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
export const ERROR_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:Error";

/** A SCIM user body for this e-mail. */
export const scimUser = (email: string, extra: Record<string, unknown> = {}) => ({
  schemas: [USER_SCHEMA],
  userName: email,
  name: { givenName: "Ada", familyName: "Lovelace" },
  emails: [{ primary: true, value: email, type: "work" }],
  active: true,
  ...extra,
});

/** The answer is SCIM's error body with this status. */
export const expectScimError = (answer: ScimAnswer, status: number, scimType?: string) => {
  expect(answer.status, JSON.stringify(answer.body)).toBe(status);
  expect(answer.body).toMatchObject({ schemas: [ERROR_SCHEMA], status: String(status) });
  expect(typeof answer.body.detail).toBe("string");
  if (scimType) expect(answer.body.scimType).toBe(scimType);
};
