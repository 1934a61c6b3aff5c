import { request } from "node:http";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { createProject, createTenant, uniqueName, type Tenant } from "../helpers/tenant";

type Answer = { status: number; contentType: string; body: Record<string, unknown> };

/** A request sent exactly as given (fetch would re-encode the path); the answer must be the spec's JSON. */
const raw = (tenant: Tenant, method: string, path: string, headers: Record<string, string> = {}, body?: Buffer) =>
  new Promise<Answer>((resolve, reject) => {
    const url = new URL(tenant.app.baseUrl);
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path,
        headers: {
          authorization: `Bearer ${tenant.adminToken}`,
          ...(body ? { "content-type": "application/json", "content-length": body.length } : {}),
          ...headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          try {
            resolve({
              status: res.statusCode!,
              contentType: res.headers["content-type"] ?? "",
              body: JSON.parse(text) as Record<string, unknown>,
            });
          } catch {
            reject(new Error(`${res.statusCode} answer is not JSON: ${text.slice(0, 200)}`));
          }
        });
      },
    );
    req.on("error", reject);
    req.end(body);
  });

const expectSpecError = (answer: Answer, status: number) => {
  expect(answer.status).toBe(status);
  expect(answer.contentType).toMatch(/^application\/json/);
  expect(answer.body).toMatchObject({ statusCode: status, reqId: expect.stringMatching(/^req-/) });
  expect(typeof answer.body.error).toBe("string");
};

describe("input that is not valid on the wire", () => {
  it("answers a path parameter that is not valid percent-encoding with a JSON 400", async () => {
    const tenant = await createTenant();
    for (const segment of ["%", "%zz", "%C0%AF", "%FF%FE", "%ED%A0%80"]) {
      const answer = await raw(tenant, "GET", `/api/v1/identities/${segment}`);
      expectSpecError(answer, 400);
      expect(answer.body).toMatchObject({ error: "BadRequest", message: "Invalid URL encoding" });
    }
    const nested = await raw(tenant, "DELETE", `/api/v1/projects/${tenant.orgId}/roles/%zz`);
    expectSpecError(nested, 400);
  });

  it("answers a body marked gzip or deflate that does not inflate with a JSON 400", async () => {
    const tenant = await createTenant();
    const json = Buffer.from(JSON.stringify({ projectName: uniqueName("p") }));
    const notGzip = await raw(tenant, "POST", "/api/v1/projects", { "content-encoding": "gzip" }, json);
    expectSpecError(notGzip, 400);
    expect(notGzip.body).toMatchObject({ error: "BadRequest", message: "The request body could not be decompressed" });
    const truncated = gzipSync(json).subarray(0, 12);
    expectSpecError(await raw(tenant, "POST", "/api/v1/projects", { "content-encoding": "gzip" }, truncated), 400);
    const garbage = Buffer.from([0xde, 0xad, 0xbe, 0xef]);
    expectSpecError(await raw(tenant, "POST", "/api/v1/projects", { "content-encoding": "deflate" }, garbage), 400);
  });

  it("still accepts a body that is really gzip", async () => {
    const tenant = await createTenant();
    const body = gzipSync(Buffer.from(JSON.stringify({ projectName: uniqueName("p") })));
    const answer = await raw(tenant, "POST", "/api/v1/projects", { "content-encoding": "gzip" }, body);
    expect(answer.status).toBe(200);
  });

  it("refuses a lone surrogate in a certificate authority's common name with 422 and stores nothing", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant, "cert-manager");
    const res = await tenant.admin.certificateAuthorities.create({
      body: {
        projectId: project.id,
        name: uniqueName("root"),
        configuration: { type: "root", commonName: "Root \uD800", keyAlgorithm: "EC_prime256v1" },
      },
    });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({
      statusCode: 422,
      error: "ValidationFailure",
      message: [{ code: "custom", path: ["configuration", "commonName"] }],
    });
    const list = await tenant.admin.certificateAuthorities.list({ query: { projectId: project.id } });
    expect(list.status === 200 && list.body.certificateAuthorities).toEqual([]);
  });

  it("refuses lone surrogates in any string of a body, before the route's own rules", async () => {
    const tenant = await createTenant();
    const res = await tenant.admin.identities.create({
      body: { name: "a\uDC00b", organizationId: tenant.orgId, role: "no-access" },
    });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ message: [{ path: ["name"] }] });
    const key = await tenant.admin.projects.create({
      body: { projectName: uniqueName("p"), [`k\uD800`]: "x" } as never,
    });
    expect(key.status).toBe(422);
  });

  it("checks authentication before it looks at the strings", async () => {
    const tenant = await createTenant();
    const res = await tenant.anonymous.identities.create({
      body: { name: "a\uDC00b", organizationId: tenant.orgId, role: "no-access" },
    });
    expect(res.status).toBe(401);
  });
});

describe("requests node's parser refuses", () => {
  it("answers a 5,000-parameter query string with the JSON 431 body", async () => {
    const tenant = await createTenant();
    const query = Array.from({ length: 5_000 }, (_, i) => `p${i}=${i}`).join("&");
    const answer = await raw(tenant, "GET", `/api/v1/identities?${query}`);
    expectSpecError(answer, 431);
    expect(answer.body).toMatchObject({ error: "RequestHeaderFieldsTooLarge" });
  });

  it("answers an oversized header on a reused keep-alive connection with the JSON 431 body", async () => {
    const tenant = await createTenant();
    expect((await raw(tenant, "GET", "/api/status")).status).toBe(200);
    expectSpecError(await raw(tenant, "GET", "/api/status", { "x-filler": "a".repeat(20_000) }), 431);
  });
});
