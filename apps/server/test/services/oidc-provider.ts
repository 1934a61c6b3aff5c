import { createServer } from "node:http";
import { once } from "node:events";
import { exportJWK, generateKeyPair } from "jose";
import Provider from "oidc-provider";
import { freePort, waitFor } from "./debian";
import { OIDC_TEST_CLIENTS } from "./oidc-clients";

/**
 * The `oidc-provider` package serving a real issuer on a free loopback port: discovery, JWKS and
 * a token endpoint (client credentials, JWT access tokens for any https resource). Published as
 * KEYWARD_TEST_OIDC_ISSUER.
 */
export const startOidcProvider = async () => {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
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
    features: {
      devInteractions: { enabled: false },
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
    ttl: { ClientCredentials: 300 },
    extraTokenClaims: (_ctx, token) =>
      "clientId" in token && token.clientId ? { ...claimsByClient[token.clientId] } : undefined,
  });
  const handle = provider.callback();
  const server = createServer((req, res) => void handle(req, res));
  server.listen(port, "127.0.0.1");
  await once(server, "listening");
  await waitFor("oidc-provider", async () => (await fetch(`${issuer}/.well-known/openid-configuration`)).ok);
  process.env.KEYWARD_TEST_OIDC_ISSUER = issuer;
  return async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
};
