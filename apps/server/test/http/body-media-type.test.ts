import { randomUUID } from "node:crypto";
import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { createTenant, expectOk, uniqueName, type Tenant } from "../helpers/tenant";
import { createBareIdentity } from "../auth-methods/helpers";

type Answer = { status: number; type: string; body: Record<string, unknown> };

const post = async (tenant: Tenant, path: string, headers: Record<string, string>, body?: string): Promise<Answer> => {
  const res = await fetch(`${tenant.app.baseUrl}${path}`, { method: "POST", headers, body });
  const text = await res.text();
  const type = res.headers.get("content-type") ?? "";
  return { status: res.status, type, body: type.includes("json") ? (JSON.parse(text) as Record<string, unknown>) : {} };
};

/** A POST with no body and neither Content-Length nor Transfer-Encoding, over a raw socket. */
const postWithoutLength = (tenant: Tenant, path: string, headers: Record<string, string>) =>
  new Promise<{ status: number; body: Record<string, unknown> }>((resolve, reject) => {
    const { hostname, port } = new URL(tenant.app.baseUrl);
    const socket = connect(Number(port), hostname);
    let raw = "";
    socket.on("data", (chunk: Buffer) => (raw += chunk.toString("utf8")));
    socket.on("error", reject);
    socket.on("end", () => {
      const [head = "", body = ""] = raw.split("\r\n\r\n");
      resolve({ status: Number(head.split(" ")[1]), body: JSON.parse(body) as Record<string, unknown> });
    });
    const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`);
    socket.write(`POST ${path} HTTP/1.1\r\nHost: ${hostname}\r\nConnection: close\r\n${lines.join("")}\r\n`);
  });

const expect415 = (answer: Answer, types: string) => {
  expect(answer.status).toBe(415);
  expect(answer.body).toEqual({
    reqId: expect.stringMatching(/^req-/),
    statusCode: 415,
    error: "UnsupportedMediaType",
    message: expect.stringContaining(`must be ${types}`),
  });
};

const PROJECTS = "/api/v1/projects";
const UA_LOGIN = "/api/v1/auth/universal-auth/login";

describe("request bodies of a media type the route does not read", () => {
  it("answers 415 naming application/json for text/plain JSON, a form, or no Content-Type; nothing is written", async () => {
    const tenant = await createTenant();
    const auth = { authorization: `Bearer ${tenant.adminToken}` };
    const name = uniqueName("media-type");
    const json = JSON.stringify({ projectName: name });

    const asText = await post(tenant, PROJECTS, { ...auth, "content-type": "text/plain" }, json);
    expect415(asText, "application/json");
    expect(asText.body.message).toContain("text/plain");
    expect415(
      await post(
        tenant,
        PROJECTS,
        { ...auth, "content-type": "application/x-www-form-urlencoded" },
        `projectName=${name}`,
      ),
      "application/json",
    );
    // fetch types a string body as text/plain itself; bytes go without any type.
    const noType = await fetch(`${tenant.app.baseUrl}${PROJECTS}`, {
      method: "POST",
      headers: auth,
      body: new TextEncoder().encode(json),
    });
    expect(noType.status).toBe(415);
    expect(((await noType.json()) as { message: string }).message).toContain("no Content-Type");
    // Before authentication, like the body parser's own 400 and 413: no token needed to learn the type.
    expect415(await post(tenant, PROJECTS, { "content-type": "text/plain" }, json), "application/json");

    const projects = expectOk(await tenant.admin.projects.list({ query: {} })).projects;
    expect(projects.map((p) => p.name)).not.toContain(name);

    // The same body as JSON (with a charset) is read.
    const created = await post(tenant, PROJECTS, { ...auth, "content-type": "application/json; charset=utf-8" }, json);
    expect(created.status).toBe(200);
  });

  it("keeps reading form bodies on the login routes, and names both types there", async () => {
    const tenant = await createTenant();
    const identity = await createBareIdentity(tenant, "member");
    const { identityUniversalAuth } = expectOk(
      await tenant.admin.universalAuth.attach({ params: { identityId: identity.id }, body: { lockoutEnabled: false } }),
    );
    const { clientSecret } = expectOk(
      await tenant.admin.universalAuth.createClientSecret({ params: { identityId: identity.id }, body: {} }),
    );
    const fields = { clientId: identityUniversalAuth.clientId, clientSecret };
    const asForm = await post(
      tenant,
      UA_LOGIN,
      { "content-type": "application/x-www-form-urlencoded" },
      new URLSearchParams(fields).toString(),
    );
    expect(asForm.status).toBe(200);
    expect(asForm.body.accessToken).toEqual(expect.any(String));
    expect415(
      await post(tenant, UA_LOGIN, { "content-type": "text/plain" }, JSON.stringify(fields)),
      "application/json or application/x-www-form-urlencoded",
    );
    // A wrong secret as a form is the login's own 401.
    const wrong = await post(
      tenant,
      UA_LOGIN,
      { "content-type": "application/x-www-form-urlencoded" },
      new URLSearchParams({ ...fields, clientSecret: "wrong" }).toString(),
    );
    expect(wrong).toMatchObject({ status: 401, body: { message: "Invalid credentials" } });
  });

  it("does not refuse a request without body bytes: the route's validation answers", async () => {
    const tenant = await createTenant();
    const auth = { authorization: `Bearer ${tenant.adminToken}` };
    const required = (answer: { status: number; body: Record<string, unknown> }) => {
      expect(answer.status).toBe(422);
      expect(answer.body.error).toBe("ValidationFailure");
    };
    required(await postWithoutLength(tenant, PROJECTS, auth));
    required(await postWithoutLength(tenant, PROJECTS, { ...auth, "content-type": "text/plain" }));
    required(await post(tenant, PROJECTS, { ...auth, "content-type": "text/plain", "content-length": "0" }, ""));
    required(await post(tenant, PROJECTS, auth));
  });

  it("leaves the protocol routes outside the contract their own media types", async () => {
    const tenant = await createTenant();
    // SCIM reads application/scim+json and answers with its own error body (no token here).
    const scim = await post(tenant, "/api/v1/scim/Users", { "content-type": "application/scim+json" }, "{}");
    expect(scim.status).toBe(401);
    expect(scim.body.error).not.toBe("UnsupportedMediaType");
    expect(scim.body.schemas).toBeDefined();
    // OCSP answers every outcome as a DER OCSPResponse over 200.
    const ocsp = await fetch(`${tenant.app.baseUrl}/api/v1/cert-manager/ca/internal/${randomUUID()}/ocsp`, {
      method: "POST",
      headers: { "content-type": "application/ocsp-request" },
      body: new Uint8Array([0x30, 0x00]),
    });
    expect(ocsp.status).toBe(200);
    expect(ocsp.headers.get("content-type")).toBe("application/ocsp-response");
    // EST reads base64 PKCS#10 bodies; an unknown profile is its own answer, not a 415.
    const est = await post(
      tenant,
      `/.well-known/est/profiles/${randomUUID()}/simpleenroll`,
      { "content-type": "application/pkcs10" },
      "MIIB",
    );
    expect(est.status).not.toBe(415);
    expect(est.body.error).not.toBe("UnsupportedMediaType");
  });
});
