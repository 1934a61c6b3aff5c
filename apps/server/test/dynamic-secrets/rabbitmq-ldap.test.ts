import { describe, expect, it } from "vitest";
import { sweepOrphanCredentials } from "../../src/modules/dynamic-secrets/orphan-sweeper";
import { getTestApp } from "../helpers/app";
import { expectOk, uniqueName } from "../helpers/tenant";
import { createScope, leaseOf, scopeOf } from "./helpers";
import {
  ROTATING_DN,
  canBindToLdap,
  canLoginToRabbit,
  createProviderSecret,
  ldapEntryExists,
  ldapInputs,
  leaseDn,
  rabbitAs,
  rabbitInputs,
  rabbitPermissions,
  rabbitUrl,
  rabbitUserExists,
  staticLdapInputs,
} from "./provider-targets";

describe("rabbit-mq provider (a real RabbitMQ, management API)", () => {
  it("creates a user with its tags and vhost permissions, and deletes it on revoke", async () => {
    const scope = await createScope();
    const secret = await createProviderSecret(scope, { type: "rabbit-mq", inputs: rabbitInputs() });
    const got = expectOk(
      await scope.tenant.admin.dynamicSecrets.get({ params: { name: secret.name }, query: scopeOf(scope) }),
    ).dynamicSecret;
    expect(got.inputs).toMatchObject({ tags: ["management"], virtualHost: { name: "/" } });
    expect(JSON.stringify(got)).not.toContain(decodeURIComponent(rabbitUrl().password));

    const { lease, data } = await leaseOf(scope, secret.name);
    expect(data.DB_USERNAME).toBe(lease.externalEntityId);
    const whoami = await rabbitAs(data.DB_USERNAME!, data.DB_PASSWORD!, "whoami");
    expect(whoami.status).toBe(200);
    expect(await whoami.json()).toMatchObject({ name: data.DB_USERNAME, tags: ["management"] });
    expect(await rabbitPermissions(data.DB_USERNAME!)).toEqual([
      expect.objectContaining({ vhost: "/", read: ".*", write: "^amq\\.gen.*", configure: "" }),
    ]);

    expectOk(
      await scope.tenant.admin.dynamicSecretLeases.delete({ params: { leaseId: lease.id }, body: scopeOf(scope) }),
    );
    expect(await rabbitUserExists(data.DB_USERNAME!)).toBe(false);
    expect(await canLoginToRabbit(data.DB_USERNAME!, data.DB_PASSWORD!)).toBe(false);
  });

  it("refuses a wrong admin password and a missing virtual host with 400", async () => {
    const scope = await createScope();
    for (const inputs of [
      rabbitInputs({ password: "wrong-password" }),
      rabbitInputs({ virtualHost: { name: "missing", permissions: { read: "", write: "", configure: "" } } }),
    ]) {
      const res = await scope.tenant.admin.dynamicSecrets.create({
        body: {
          ...scopeOf(scope),
          name: uniqueName("mq"),
          provider: { type: "rabbit-mq", inputs },
          defaultTTL: "1h",
        },
      });
      expect(res.status).toBe(400);
    }
  });
});

describe("ldap provider (the suite's slapd)", () => {
  it("adds the entries of the creation LDIF, which bind, and deletes them on revoke", async () => {
    const scope = await createScope();
    const secret = await createProviderSecret(scope, { type: "ldap", inputs: ldapInputs() });
    const got = expectOk(
      await scope.tenant.admin.dynamicSecrets.get({ params: { name: secret.name }, query: scopeOf(scope) }),
    ).dynamicSecret;
    expect(got.inputs).toMatchObject({ credentialType: "dynamic" });
    expect(got.inputs).not.toHaveProperty("bindpass");

    const { lease, data } = await leaseOf(scope, secret.name);
    expect(data.USERNAME).toBe(lease.externalEntityId);
    const dn = leaseDn(data.USERNAME!);
    expect(JSON.parse(data.DN_ARRAY!)).toEqual([dn]);
    expect(await canBindToLdap(dn, data.PASSWORD!)).toBe(true);

    expectOk(
      await scope.tenant.admin.dynamicSecretLeases.delete({ params: { leaseId: lease.id }, body: scopeOf(scope) }),
    );
    expect(await ldapEntryExists(dn)).toBe(false);
    expect(await canBindToLdap(dn, data.PASSWORD!)).toBe(false);
  });

  it("rolls back a creation that failed halfway", async () => {
    const scope = await createScope();
    const inputs = ldapInputs({
      creationLdif: `${ldapInputs().creationLdif}
dn: cn={{Username}},ou=missing,dc=keyward,dc=test
objectClass: inetOrgPerson
cn: {{Username}}
sn: lease
`,
      rollbackLdif: ldapInputs().revocationLdif,
    });
    const secret = await createProviderSecret(scope, { type: "ldap", inputs });
    const res = await scope.tenant.admin.dynamicSecretLeases.create({
      body: { ...scopeOf(scope), dynamicSecretName: secret.name },
    });
    expect(res.status).toBe(400);
    const leases = expectOk(
      await scope.tenant.admin.dynamicSecrets.listLeases({ params: { name: secret.name }, query: scopeOf(scope) }),
    ).leases;
    expect(leases).toEqual([]);
  });

  it("rotates a static entry's password per lease and again on revoke", async () => {
    const scope = await createScope();
    const secret = await createProviderSecret(scope, { type: "ldap", inputs: staticLdapInputs() });
    const { lease, data } = await leaseOf(scope, secret.name);
    expect(data.USERNAME).toBe(ROTATING_DN);
    expect(await canBindToLdap(ROTATING_DN, data.PASSWORD!)).toBe(true);
    expectOk(
      await scope.tenant.admin.dynamicSecretLeases.delete({ params: { leaseId: lease.id }, body: scopeOf(scope) }),
    );
    expect(await ldapEntryExists(ROTATING_DN)).toBe(true);
    expect(await canBindToLdap(ROTATING_DN, data.PASSWORD!)).toBe(false);
  });

  it("answers 400 for LDIF it cannot apply and 422 for a template shape it does not know", async () => {
    const scope = await createScope();
    const create = (inputs: Record<string, unknown>) =>
      scope.tenant.admin.dynamicSecrets.create({
        body: {
          ...scopeOf(scope),
          name: uniqueName("ldap"),
          provider: { type: "ldap", inputs } as never,
          defaultTTL: "1h",
        },
      });
    const badLdif = await create(ldapInputs({ creationLdif: "objectClass: top\n" }));
    expect(badLdif.status).toBe(400);
    expect(JSON.stringify(badLdif.body)).toContain("Invalid LDIF");
    const unknownValue = await create(
      ldapInputs({ revocationLdif: "dn: cn={{Secret}},ou=leases\nchangetype: delete\n" }),
    );
    expect(unknownValue.status).toBe(400);
    const missing = await create({ ...ldapInputs(), creationLdif: undefined });
    expect(missing.status).toBe(422);
    const wrongBind = await create(ldapInputs({ bindpass: "wrong-password" }));
    expect(wrongBind.status).toBe(400);
  });
});

describe("orphan sweep on RabbitMQ and LDAP", () => {
  it("removes users and entries that carry a secret's marker but have no lease", async () => {
    const app = await getTestApp();
    const scope = await createScope();
    const rabbit = await createProviderSecret(scope, { type: "rabbit-mq", inputs: rabbitInputs() });
    const ldap = await createProviderSecret(scope, { type: "ldap", inputs: ldapInputs() });
    const keptRabbit = await leaseOf(scope, rabbit.name);
    const keptLdap = await leaseOf(scope, ldap.name);
    // Credentials whose rows are gone, as a creator that died after giving up would leave them.
    const strayRabbit = await leaseOf(scope, rabbit.name);
    const strayLdap = await leaseOf(scope, ldap.name);
    await app.deps.db
      .deleteFrom("dynamic_secret_leases")
      .where("id", "in", [strayRabbit.lease.id, strayLdap.lease.id])
      .execute();

    expect(await sweepOrphanCredentials(app.deps)).toBeGreaterThanOrEqual(2);
    expect(await rabbitUserExists(strayRabbit.data.DB_USERNAME!)).toBe(false);
    expect(await ldapEntryExists(leaseDn(strayLdap.data.USERNAME!))).toBe(false);
    expect(await canLoginToRabbit(keptRabbit.data.DB_USERNAME!, keptRabbit.data.DB_PASSWORD!)).toBe(true);
    expect(await canBindToLdap(leaseDn(keptLdap.data.USERNAME!), keptLdap.data.PASSWORD!)).toBe(true);
  });
});
