import { createKeywardClient } from "@keyward/client";
import { describe, expect, it } from "vitest";
import { enrolGateway } from "../gateways/helpers";
import { createTenant } from "../helpers/tenant";

const clientWithHeader = (baseUrl: string, authorization: string) =>
  createKeywardClient({ baseUrl, headers: { authorization } });

describe("the Authorization header", () => {
  it("accepts one token under the Bearer scheme, whatever its case", async () => {
    const tenant = await createTenant();
    for (const scheme of ["Bearer", "bearer", "BEARER"]) {
      const res = await clientWithHeader(tenant.app.baseUrl, `${scheme} ${tenant.adminToken}`).identities.list({
        query: {},
      });
      expect(res.status).toBe(200);
    }
  });

  it("refuses a valid token under any other scheme or without a scheme with 401", async () => {
    const tenant = await createTenant();
    const token = tenant.adminToken;
    for (const header of [`Digest ${token}`, `XXXXXXX${token}`, `Basic ${token}`, `Token ${token}`, token]) {
      const res = await clientWithHeader(tenant.app.baseUrl, header).identities.list({ query: {} });
      expect(res.status, header.slice(0, 12)).toBe(401);
      expect(res.body).toMatchObject({ statusCode: 401, error: "UnauthorizedError" });
    }
  });

  it("refuses a Bearer header with no token or with more than one with 401", async () => {
    const tenant = await createTenant();
    for (const header of ["Bearer", "Bearer ", `Bearer ${tenant.adminToken} ${tenant.adminToken}`]) {
      const res = await clientWithHeader(tenant.app.baseUrl, header).identities.list({ query: {} });
      expect(res.status, header.slice(0, 12)).toBe(401);
    }
  });

  it("applies the same rule to gateway heartbeats", async () => {
    const tenant = await createTenant();
    const { accessToken } = await enrolGateway(tenant);
    const heartbeat = (header: string) => clientWithHeader(tenant.app.baseUrl, header).gateways.heartbeat({ body: {} });
    expect((await heartbeat(`bearer ${accessToken}`)).status).toBe(200);
    expect((await heartbeat(`Digest ${accessToken}`)).status).toBe(401);
    expect((await heartbeat(`XXXXXXX${accessToken}`)).status).toBe(401);
  });
});
