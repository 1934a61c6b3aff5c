import { createKeywardClient, ok, type KeywardClient } from "@keyward/client";

/** The console registered at the provider (RFC 7591) with its callback, as an operator would. */
export const registerAtProvider = async (baseUrl: string, oidcIssuer: string) => {
  const registered = await fetch(`${oidcIssuer}/reg`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      redirect_uris: [`${baseUrl}/api/v1/sso/oidc/callback`],
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic",
    }),
  });
  if (registered.status !== 201) throw new Error(`the provider refused the registration: ${registered.status}`);
  return (await registered.json()) as { client_id: string; client_secret: string };
};

/**
 * A new organization (made with the instance admin identity's token) whose single sign-on goes
 * through the test OpenID provider; answers its slug, id and its admin identity's client.
 */
export const organizationWithSso = async (
  target: { baseUrl: string; oidcIssuer: string; instanceAdmin: KeywardClient },
  name: string,
) => {
  const { baseUrl, oidcIssuer, instanceAdmin } = target;
  const { organization, identity } = await ok(instanceAdmin.system.createOrganization({ body: { name } }));
  const admin = createKeywardClient({ baseUrl, token: identity.credentials.token });
  const client = await registerAtProvider(baseUrl, oidcIssuer);
  await ok(
    admin.sso.createOidcConfig({
      body: {
        organizationId: organization.id,
        configurationType: "discoveryURL",
        discoveryURL: oidcIssuer,
        clientId: client.client_id,
        clientSecret: client.client_secret,
        isActive: true,
      },
    }),
  );
  return { slug: organization.slug, admin, orgId: organization.id };
};
