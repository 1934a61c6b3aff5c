import { request } from "node:https";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTenant, expectOk, uniqueName, type Tenant } from "../helpers/tenant";
import { serveOidcProvider } from "../services/oidc-provider";
import { createTestCa, type TestCa } from "../services/workload-peers";
import { CookieJar } from "./browser-trip";
import { refresh } from "./sso-helpers";

type Answer = { status: number; location: string | null; body: string };

/** One HTTPS request to the provider, trusting only the test's CA, cookies from and into the jar. */
const providerStep = (ca: TestCa, jar: CookieJar, url: string, form?: URLSearchParams) =>
  new Promise<Answer>((resolve, reject) => {
    const req = request(
      url,
      {
        method: form ? "POST" : "GET",
        ca: ca.caPem,
        headers: {
          cookie: jar.header(),
          ...(form ? { "content-type": "application/x-www-form-urlencoded" } : {}),
        },
      },
      (res) => {
        const setCookie = res.headers["set-cookie"] ?? [];
        jar.take(new Response(null, { headers: setCookie.map((c) => ["set-cookie", c] as [string, string]) }));
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            location: res.headers.location ?? null,
            body: Buffer.concat(chunks).toString(),
          }),
        );
      },
    );
    req.on("error", reject);
    req.end(form?.toString());
  });

const register = async (ca: TestCa, issuer: string, baseUrl: string) =>
  new Promise<{ client_id: string; client_secret: string }>((resolve, reject) => {
    const req = request(
      `${issuer}/reg`,
      { method: "POST", ca: ca.caPem, headers: { "content-type": "application/json" } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve(JSON.parse(Buffer.concat(chunks).toString()) as never));
      },
    );
    req.on("error", reject);
    req.end(
      JSON.stringify({
        redirect_uris: [`${baseUrl}/api/v1/sso/oidc/callback`],
        grant_types: ["authorization_code"],
        response_types: ["code"],
      }),
    );
  });

describe("a provider served over TLS with a CA of its own", () => {
  let ca: TestCa;
  let provider: Awaited<ReturnType<typeof serveOidcProvider>>;
  let tenant: Tenant;
  let client: { client_id: string; client_secret: string };
  beforeAll(async () => {
    ca = await createTestCa();
    provider = await serveOidcProvider(ca);
    tenant = await createTenant();
    client = await register(ca, provider.issuer, tenant.app.baseUrl);
  });
  afterAll(() => provider.close());

  const configure = (caCert: string | null) =>
    tenant.admin.sso.getOidcConfig({ query: { organizationId: tenant.orgId } }).then((current) =>
      current.status === 200
        ? tenant.admin.sso.updateOidcConfig({ body: { organizationId: tenant.orgId, caCert } })
        : tenant.admin.sso.createOidcConfig({
            body: {
              organizationId: tenant.orgId,
              configurationType: "discoveryURL",
              discoveryURL: provider.issuer,
              clientId: client.client_id,
              clientSecret: client.client_secret,
              isActive: true,
              caCert,
            },
          }),
    );

  it("refuses to talk to the provider without its CA", async () => {
    expectOk(await configure(null));
    const start = await fetch(`${tenant.app.baseUrl}/api/v1/sso/oidc/login?orgSlug=${tenant.orgSlug}`, {
      redirect: "manual",
    });
    expect(start.status).toBe(401);
    expect(((await start.json()) as { message: string }).message).toMatch(/discovery document could not be read/);
  });

  it("signs a person in through discovery, the token endpoint and the JWKS over TLS with the configured CA", async () => {
    expectOk(await configure(ca.caPem));
    const keyward = new CookieJar();
    const browser = new CookieJar();
    const start = await fetch(`${tenant.app.baseUrl}/api/v1/sso/oidc/login?orgSlug=${tenant.orgSlug}`, {
      redirect: "manual",
    });
    keyward.take(start);
    expect(start.status).toBe(302);
    let url = start.headers.get("location")!;
    expect(url.startsWith(`${provider.issuer}/`)).toBe(true);
    let answer = await providerStep(ca, browser, url);
    url = new URL(answer.location!, url).toString();
    const email = `${uniqueName("tls-person")}@example.test`;
    answer = await providerStep(
      ca,
      browser,
      url,
      new URLSearchParams({ sub: `sub-${email}`, email, email_verified: "true" }),
    );
    for (let hops = 0; hops < 5 && !url.startsWith(tenant.app.baseUrl); hops++) {
      url = new URL(answer.location!, url).toString();
      if (!url.startsWith(tenant.app.baseUrl)) answer = await providerStep(ca, browser, url);
    }
    const back = await fetch(url, { redirect: "manual", headers: { cookie: keyward.header() } });
    keyward.take(back);
    expect(back.status, await back.clone().text()).toBe(302);
    const session = await refresh(tenant.app.baseUrl, keyward);
    const { token } = (await session.json()) as { token: string };
    expect(expectOk(await tenant.app.client(token).users.me()).user.email).toBe(email);
  });
});
