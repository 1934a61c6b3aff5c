import { importPKCS8, SignJWT } from "jose";
import type { AppDeps } from "../../context";
import { withHttp } from "../connectors/http";
import type { AzureConnectionCredentials, GcpConnectionCredentials } from "./app-connection.types";

const GCP_SCOPE = "https://www.googleapis.com/auth/cloud-platform";
const AZURE_VAULT_SCOPE = "https://vault.azure.net/.default";

/** A token endpoint refused or could not be reached; the message names the provider's error code only. */
export class TokenRequestError extends Error {
  override name = "TokenRequestError";
}

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

/** POSTs a token request (form-encoded) and answers the access token; the secrets sent never appear in an error. */
const requestToken = async (deps: AppDeps, url: string, body: string, secrets: string[]) =>
  withHttp(
    { outbound: deps.env.ALLOW_PRIVATE_OUTBOUND, deadlineMs: deps.env.CONNECTOR_DEADLINE_MS, secrets },
    { url, ca: deps.outboundCa, schemes: ["https:"] },
    async (call) => {
      const answer = await call({
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
        body,
      });
      let parsed: { access_token?: unknown; error?: unknown } = {};
      try {
        parsed = JSON.parse(answer.body) as typeof parsed;
      } catch {
        // Not JSON: reported by status below.
      }
      if (answer.status !== 200 || typeof parsed.access_token !== "string")
        throw new TokenRequestError(
          `The token endpoint refused the credentials (HTTP ${answer.status}${typeof parsed.error === "string" ? `, ${parsed.error}` : ""})`,
        );
      return parsed.access_token;
    },
  );

/**
 * An access token for a Google service account: a JWT it signs (RS256, for the cloud-platform scope)
 * exchanged at Google's token endpoint (GCP_OAUTH2_TOKEN_URL; the key file's own token_uri is not
 * followed, so a key file cannot send Keyward elsewhere).
 */
export const gcpAccessToken = async (deps: AppDeps, creds: GcpConnectionCredentials) => {
  const url = deps.env.GCP_OAUTH2_TOKEN_URL;
  const key = await importPKCS8(creds.privateKey, "RS256").catch(() => {
    throw new TokenRequestError("The service account's private key could not be read");
  });
  const now = Math.floor(deps.clock.now() / 1_000);
  const assertion = await new SignJWT({ scope: GCP_SCOPE })
    .setProtectedHeader({ alg: "RS256", typ: "JWT", ...(creds.privateKeyId ? { kid: creds.privateKeyId } : {}) })
    .setIssuer(creds.clientEmail)
    .setAudience(url)
    .setIssuedAt(now)
    .setExpirationTime(now + 3_600)
    .sign(key);
  return requestToken(deps, url, form({ grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer", assertion }), [
    assertion,
  ]);
};

/** An access token for Azure Key Vault: the client-credentials grant at the tenant's token endpoint. */
export const azureAccessToken = (deps: AppDeps, creds: AzureConnectionCredentials) =>
  requestToken(
    deps,
    `${deps.env.AZURE_LOGIN_BASE_URL.replace(/\/$/, "")}/${encodeURIComponent(creds.tenantId)}/oauth2/v2.0/token`,
    form({
      grant_type: "client_credentials",
      client_id: creds.clientId,
      client_secret: creds.clientSecret,
      scope: AZURE_VAULT_SCOPE,
    }),
    [creds.clientSecret],
  );
