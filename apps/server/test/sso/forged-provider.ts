import { createServer, type Server } from "node:http";
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import { SignJWT, exportJWK, generateKeyPair, type JWTPayload } from "jose";

/** What the next ID token gets wrong. */
export type Forgery =
  | "none"
  | "other-issuer"
  | "other-audience"
  | "expired"
  | "alg-none"
  | "wrong-nonce"
  | "other-key"
  | "unverified-email";

/**
 * An OpenID provider that speaks the real protocol (discovery, JWKS, authorization and token
 * endpoints) and signs whatever ID token the test asks for: the way to show that Keyward refuses
 * each forgery a hostile or broken provider could send.
 */
export const startForgedProvider = async () => {
  const { privateKey, publicKey } = await generateKeyPair("RS256", { extractable: true });
  const other = await generateKeyPair("RS256", { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid: "forged-key", alg: "RS256", use: "sig" };
  const codes = new Map<string, { nonce: string; clientId: string }>();
  let forgery: Forgery = "none";
  let email = "someone@example.test";
  let issuer = "";

  const sign = async (claims: JWTPayload, key: typeof privateKey = privateKey) =>
    new SignJWT(claims).setProtectedHeader({ alg: "RS256", kid: "forged-key" }).sign(key);

  const idTokenFor = async (grant: { nonce: string; clientId: string }) => {
    const now = Math.floor(Date.now() / 1000);
    const claims: JWTPayload = {
      iss: forgery === "other-issuer" ? "https://issuer.elsewhere.test" : issuer,
      aud: forgery === "other-audience" ? "someone-else" : grant.clientId,
      sub: `forged-${email}`,
      email,
      email_verified: forgery !== "unverified-email",
      nonce: forgery === "wrong-nonce" ? "a-nonce-of-another-sign-in" : grant.nonce,
      iat: forgery === "expired" ? now - 7200 : now,
      exp: forgery === "expired" ? now - 3600 : now + 300,
    };
    if (forgery === "alg-none") {
      const part = (v: object) => Buffer.from(JSON.stringify(v)).toString("base64url");
      return `${part({ alg: "none", typ: "JWT" })}.${part(claims)}.`;
    }
    return sign(claims, forgery === "other-key" ? other.privateKey : privateKey);
  };

  const server: Server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? "/", issuer);
      const json = (status: number, body: unknown) =>
        res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
      if (url.pathname === "/.well-known/openid-configuration") {
        return json(200, {
          issuer,
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: `${issuer}/token`,
          jwks_uri: `${issuer}/jwks`,
        });
      }
      if (url.pathname === "/jwks") return json(200, { keys: [jwk] });
      if (url.pathname === "/authorize") {
        const code = randomBytes(16).toString("hex");
        codes.set(code, {
          nonce: url.searchParams.get("nonce") ?? "",
          clientId: url.searchParams.get("client_id") ?? "",
        });
        const back = new URL(url.searchParams.get("redirect_uri")!);
        back.searchParams.set("code", code);
        back.searchParams.set("state", url.searchParams.get("state") ?? "");
        res.writeHead(302, { location: back.toString() }).end();
        return;
      }
      if (url.pathname === "/token" && req.method === "POST") {
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk as Buffer);
        const form = new URLSearchParams(Buffer.concat(chunks).toString());
        const grant = codes.get(form.get("code") ?? "");
        if (!grant) return json(400, { error: "invalid_grant" });
        codes.delete(form.get("code")!);
        return json(200, { access_token: "opaque", token_type: "Bearer", id_token: await idTokenFor(grant) });
      }
      res.writeHead(404).end();
    })().catch(() => res.writeHead(500).end());
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer,
    forge: (next: Forgery, nextEmail = email) => {
      forgery = next;
      email = nextEmail;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
};
