import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { once } from "node:events";
import { exportJWK, generateKeyPair } from "jose";
import Provider from "oidc-provider";
import { freePort, waitFor } from "./debian";
import { OIDC_TEST_CLIENTS } from "./oidc-clients";

/** People who signed in at the provider's login page, by subject: their claims go into ID tokens. */
const people = new Map<string, Record<string, unknown>>();

const readForm = async (req: IncomingMessage) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
};

/** The provider's sign-in page: a plain form a browser (or a test's HTTP client) fills in. */
const loginPage = (uid: string) => `<!doctype html><html><head><title>Test provider sign-in</title></head><body>
<form method="post" action="/interaction/${uid}">
<label>Subject <input name="sub" required></label>
<label>E-mail <input name="email" type="email"></label>
<label>Given name <input name="given_name"></label>
<label>Family name <input name="family_name"></label>
<label>Groups <input name="groups"></label>
<label><input type="checkbox" name="email_verified" value="true" checked> E-mail verified</label>
<button type="submit">Sign in</button>
</form></body></html>`;

/**
 * The `oidc-provider` package serving a real issuer on a free loopback port: discovery, JWKS, a
 * token endpoint (client credentials, JWT access tokens for any https resource), and the
 * authorization code flow for people, with dynamic client registration (RFC 7591) so each test
 * app registers its own callback, and a sign-in form at `/interaction/:uid`. Published as
 * KEYWARD_TEST_OIDC_ISSUER.
 */
export const startOidcProvider = async () => {
  const { issuer, close } = await serveOidcProvider();
  process.env.KEYWARD_TEST_OIDC_ISSUER = issuer;
  return close;
};

/**
 * One provider instance on a free loopback port; over HTTPS when given a CA's server certificate
 * (the issuer is then `https://127.0.0.1:<port>`, trusted only by whoever holds that CA).
 */
export const serveOidcProvider = async (tls?: { certPem: string; keyPem: string; caPem: string }) => {
  const port = await freePort();
  const issuer = `${tls ? "https" : "http"}://127.0.0.1:${port}`;
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: "keyward-test-key", alg: "RS256", use: "sig" };
  const claimsByClient: Record<string, object> = Object.fromEntries(
    Object.entries(OIDC_TEST_CLIENTS).map(([id, c]) => [id, c.claims]),
  );
  const provider = new Provider(issuer, {
    clients: Object.entries(OIDC_TEST_CLIENTS).map(([clientId, client]) => ({
      client_id: clientId,
      client_secret: client.secret,
      grant_types: ["client_credentials"],
      redirect_uris: [],
      response_types: [],
    })),
    jwks: { keys: [jwk] },
    claims: {
      openid: ["sub"],
      email: ["email", "email_verified"],
      profile: ["given_name", "family_name", "groups"],
    },
    // Scope claims go into the ID token itself, as most providers send them.
    conformIdTokenClaims: false,
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub, ...people.get(sub) }) }),
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    // First-party test clients: consent is implied for the scopes they ask.
    loadExistingGrant: async (ctx) => {
      const accountId = ctx.oidc.session?.accountId;
      if (!accountId || !ctx.oidc.client) return undefined;
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId });
      grant.addOIDCScope("openid email profile");
      await grant.save();
      return grant;
    },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => "https://keyward.test",
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => ({
          scope: "api",
          audience: resource,
          accessTokenTTL: 300,
          accessTokenFormat: "jwt",
        }),
      },
    },
    ttl: {
      ClientCredentials: 300,
      AuthorizationCode: 60,
      Interaction: 600,
      Grant: 600,
      Session: 600,
      AccessToken: 300,
      IdToken: 300,
    },
    extraTokenClaims: (_ctx, token) =>
      "clientId" in token && token.clientId ? { ...claimsByClient[token.clientId] } : undefined,
  });
  const handle = provider.callback();
  const interaction = async (req: IncomingMessage, res: ServerResponse, uid: string) => {
    if (req.method === "GET") {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(loginPage(uid));
      return;
    }
    const form = await readForm(req);
    const sub = form.get("sub") ?? "";
    people.set(sub, {
      ...(form.get("email") ? { email: form.get("email") } : {}),
      email_verified: form.get("email_verified") === "true",
      ...(form.get("given_name") ? { given_name: form.get("given_name") } : {}),
      ...(form.get("family_name") ? { family_name: form.get("family_name") } : {}),
      ...(form.get("groups") !== null ? { groups: form.get("groups")!.split(",").filter(Boolean) } : {}),
    });
    await provider.interactionFinished(req, res, { login: { accountId: sub } }, { mergeWithLastSubmission: false });
  };
  const route = (req: IncomingMessage, res: ServerResponse) => {
    const uid = /^\/interaction\/([\w-]+)$/.exec(req.url ?? "")?.[1];
    if (uid) void interaction(req, res, uid).catch(() => res.writeHead(400).end("interaction failed"));
    else void handle(req, res);
  };
  const server = tls ? createHttpsServer({ key: tls.keyPem, cert: tls.certPem }, route) : createServer(route);
  server.listen(port, "127.0.0.1");
  await once(server, "listening");
  if (!tls) {
    await waitFor("oidc-provider", async () => (await fetch(`${issuer}/.well-known/openid-configuration`)).ok);
  }
  return {
    issuer,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};
