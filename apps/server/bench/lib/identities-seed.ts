import { hash } from "node:crypto";
import type { KeywardClient } from "@keyward/client";
import pg from "pg";
import { setupOk } from "./endpoint";

/** What the bench needs of one seeded identity: its Universal Auth credentials and a live access token. */
export type SeededIdentity = { clientId: string; clientSecret: string; token: string };

export const SECRET_NAME = "BENCH_SECRET";

/** The clear client secret and token of seeded identity `i`, as the SQL below derives them (hex, `kw_` + base64url). */
const clientSecretOf = (i: number) => hash("sha256", `bench-secret-${i}`, "hex");
const tokenOf = (i: number) => `kw_${hash("sha256", `bench-token-${i}`, "base64url")}`;

/** A project with one secret in dev at `/`; the read every seeded identity makes. */
export const prepareProject = async (admin: KeywardClient) => {
  const { project } = setupOk(await admin.projects.create({ body: { projectName: "identities-scale" } }));
  setupOk(
    await admin.secretsV4.batchCreate({
      body: {
        projectId: project.id,
        environment: "dev",
        secretPath: "/",
        secrets: [{ secretKey: SECRET_NAME, secretValue: "v".repeat(40), secretComment: "" }],
      },
    }),
  );
  return { projectId: project.id, orgId: project.orgId };
};

export const readPath = (projectId: string) =>
  `/api/v4/secrets/${SECRET_NAME}?projectId=${projectId}&environment=dev&secretPath=%2F`;

/**
 * An identity made through the API as an operator would: created, Universal Auth attached, a client
 * secret, a project membership with `role` (or `roles`), then logged in. The seeded ones are its copies.
 */
export const identityThroughApi = async (
  admin: KeywardClient,
  baseUrl: string,
  scope: { projectId: string; orgId: string },
  name: string,
  membership: { role: string } | { roles: { role: string }[] } = { role: "viewer" },
) => {
  const { identity } = setupOk(
    await admin.identities.create({ body: { name, organizationId: scope.orgId, role: "no-access" } }),
  );
  setupOk(await admin.universalAuth.attach({ params: { identityId: identity.id }, body: {} }));
  const { clientSecret } = setupOk(
    await admin.universalAuth.createClientSecret({ params: { identityId: identity.id }, body: {} }),
  );
  setupOk(
    await admin.projects.addIdentityMembership({
      params: { projectId: scope.projectId, identityId: identity.id },
      body: membership,
    }),
  );
  const ua = setupOk(await admin.universalAuth.get({ params: { identityId: identity.id } }));
  const clientId = ua.identityUniversalAuth.clientId;
  const res = await fetch(`${baseUrl}/api/v1/auth/universal-auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ clientId, clientSecret }),
  });
  if (res.status !== 200) throw new Error(`setup login failed: ${res.status} ${await res.text()}`);
  const { accessToken } = (await res.json()) as { accessToken: string };
  return { identityId: identity.id, clientId, clientSecret, token: accessToken };
};

/**
 * `count` copies of the template identity, written in bulk in one transaction: for each, the rows
 * the API writes for it (identity, auth config, Universal Auth settings, a client secret stored as
 * its SHA-256 hash, a project membership with the template's roles) and one access token issued
 * by a login (stored as its SHA-256 hash). Audit events of these setup writes are not written.
 * Returns every identity's clear credentials, derived from its number.
 */
export const seedIdentities = async (
  databaseUrl: string,
  template: { identityId: string },
  projectId: string,
  count: number,
): Promise<SeededIdentity[]> => {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query("begin");
    await client.query(
      `create temp table seed on commit drop as
       select i, gen_random_uuid() as identity_id, gen_random_uuid() as config_id,
              gen_random_uuid() as membership_id, gen_random_uuid() as secret_id, gen_random_uuid() as client_id,
              encode(sha256(convert_to('bench-secret-' || i, 'UTF8')), 'hex') as client_secret,
              'kw_' || translate(rtrim(encode(sha256(convert_to('bench-token-' || i, 'UTF8')), 'base64'), '='), '+/', '-_') as token
       from generate_series(0, $1::int - 1) as i`,
      [count],
    );
    const t = [template.identityId];
    await client.query(
      `insert into identities (id, org_id, project_id, name, org_role, has_delete_protection)
       select s.identity_id, t.org_id, t.project_id, 'bench-' || s.i, t.org_role, t.has_delete_protection
       from seed s, identities t where t.id = $1`,
      t,
    );
    await client.query(
      `insert into identity_auth_configs (id, identity_id, method, access_token_ttl, access_token_max_ttl,
         access_token_num_uses_limit, access_token_trusted_ips, access_token_period)
       select s.config_id, s.identity_id, c.method, c.access_token_ttl, c.access_token_max_ttl,
         c.access_token_num_uses_limit, c.access_token_trusted_ips, c.access_token_period
       from seed s, identity_auth_configs c where c.identity_id = $1 and c.method = 'universal-auth'`,
      t,
    );
    await client.query(
      `insert into identity_universal_auths (auth_config_id, client_id, client_secret_trusted_ips, lockout_enabled,
         lockout_threshold, lockout_duration_seconds, lockout_counter_reset_seconds)
       select s.config_id, s.client_id, u.client_secret_trusted_ips, u.lockout_enabled, u.lockout_threshold,
         u.lockout_duration_seconds, u.lockout_counter_reset_seconds
       from seed s, identity_universal_auths u
       join identity_auth_configs c on c.id = u.auth_config_id where c.identity_id = $1`,
      t,
    );
    await client.query(
      `insert into identity_ua_client_secrets (id, auth_config_id, description, client_secret_prefix, client_secret_hash,
         client_secret_num_uses_limit, client_secret_ttl)
       select s.secret_id, s.config_id, '', left(s.client_secret, 4), sha256(convert_to(s.client_secret, 'UTF8')), 0, 0
       from seed s`,
    );
    await client.query(
      `insert into identity_project_memberships (id, project_id, identity_id)
       select s.membership_id, $1, s.identity_id from seed s`,
      [projectId],
    );
    await client.query(
      `insert into identity_project_membership_roles (membership_id, role, custom_role_id, is_temporary)
       select s.membership_id, r.role, r.custom_role_id, r.is_temporary
       from seed s, identity_project_membership_roles r
       join identity_project_memberships m on m.id = r.membership_id
       where m.identity_id = $1 and m.project_id = $2`,
      [template.identityId, projectId],
    );
    await client.query(
      `insert into identity_access_tokens (identity_id, auth_config_id, token_hash, auth_method, access_token_ttl,
         access_token_max_ttl, access_token_num_uses_limit, access_token_period, client_secret_id)
       select s.identity_id, s.config_id, sha256(convert_to(s.token, 'UTF8')), t.auth_method, t.access_token_ttl,
         t.access_token_max_ttl, t.access_token_num_uses_limit, t.access_token_period, s.secret_id
       from seed s, (select * from identity_access_tokens where identity_id = $1 limit 1) t`,
      t,
    );
    const { rows } = await client.query<{ i: number; client_id: string }>("select i, client_id from seed order by i");
    await client.query("commit");
    await client.query("analyze");
    return rows.map(({ i, client_id }) => ({
      clientId: client_id,
      clientSecret: clientSecretOf(i),
      token: tokenOf(i),
    }));
  } finally {
    await client.end();
  }
};
