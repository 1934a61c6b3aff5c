import { describe, expect, it } from "vitest";
import { syncPass } from "../../src/modules/secret-syncs/secret-sync.job";
import { expectOk, uniqueName } from "../helpers/tenant";
import { INSTANCE_AWS_KEY, createSyncTenant, syncSource, useSyncWorld, type SyncTenant } from "./helpers";

const current = useSyncWorld();

const ROLE_ACCOUNT = "444455556666";

/** A role of the organization's AWS account that trusts the instance's key with the organization's id. */
const roleFor = (t: SyncTenant) => {
  const roleArn = `arn:aws:iam::${ROLE_ACCOUNT}:role/keyward-${t.orgId.slice(0, 8)}`;
  current().aws.addRole(roleArn, { externalId: t.orgId, trusted: [INSTANCE_AWS_KEY.accessKeyId] });
  return roleArn;
};

const assumeRoleConnection = (t: SyncTenant, roleArn: string) =>
  t.admin.appConnections.aws.create({
    body: { name: uniqueName("aws-role"), method: "assume-role", credentials: { roleArn } },
  });

describe("AWS connections that assume a role", () => {
  it("assume the role with the instance's key and the organization's id, never show the ARN, and sync through it", async () => {
    const world = current();
    const t = await createSyncTenant(world, { ROLE_SECRET: "via-role" });
    const roleArn = roleFor(t);
    const created = expectOk(await assumeRoleConnection(t, roleArn)).appConnection;
    expect(created).toMatchObject({ app: "aws", method: "assume-role", credentials: {} });
    expect(JSON.stringify(created)).not.toContain(roleArn);
    expect(world.aws.assumed.at(-1)).toMatchObject({ roleArn, externalId: t.orgId });
    expect(world.aws.assumed.at(-1)!.sessionName).toMatch(/^keyward-/);
    const read = expectOk(await t.admin.appConnections.aws.get({ params: { connectionId: created.id } }));
    expect(JSON.stringify(read)).not.toContain(roleArn);

    // A sync through it writes with the role's short-lived key, into the role's account.
    const name = `ROLE_SECRET`;
    world.aws.secrets.delete(name);
    const sync = expectOk(
      await t.admin.secretSyncs.awsSecretsManager.create({
        body: {
          ...syncSource(t, created.id),
          syncOptions: {},
          destinationConfig: { region: "us-east-1", mappingBehavior: "one-to-one" },
        } as never,
      }),
    ).secretSync;
    await syncPass(world.app.deps);
    const after = expectOk(await t.admin.secretSyncs.awsSecretsManager.get({ params: { syncId: sync.id } }));
    expect(after.secretSync.syncStatus).toBe("succeeded");
    expect(world.aws.secrets.get(name)?.value).toBe("via-role");
    expect(world.aws.secrets.get(name)?.arn).toContain(`:${ROLE_ACCOUNT}:`);
    const sessionKeys = new Set(world.aws.assumed.map((a) => a.accessKeyId));
    const writes = world.aws.calls.filter((c) => c.service === "secretsmanager" && c.operation === "CreateSecret");
    expect(writes.length).toBeGreaterThan(0);
    expect(writes.every((c) => sessionKeys.has(c.accessKeyId))).toBe(true);
    expectOk(
      await t.admin.secretSyncs.awsSecretsManager.delete({
        params: { syncId: sync.id },
        query: { removeSecrets: "true" },
      }),
    );
  });

  it("refuses another organization naming the role (its id is not the external id), a bad ARN, and turns an access key into a role on update", async () => {
    const world = current();
    const owner = await createSyncTenant(world, {});
    const roleArn = roleFor(owner);
    const other = await createSyncTenant(world, {});
    const confused = await assumeRoleConnection(other, roleArn);
    expect(confused.status).toBe(400);
    expect(JSON.stringify(confused.body)).toContain("Unable to validate connection");
    expect(JSON.stringify(confused.body)).toContain("not authorized to perform: sts:AssumeRole");

    const badArn = await assumeRoleConnection(owner, "arn:aws:iam::12:user/someone");
    expect(badArn.status).toBe(422);
    expect(JSON.stringify(badArn.body)).toContain("Invalid IAM role ARN");

    // The access-key connection becomes an assume-role one: its key is no longer shown.
    const updated = expectOk(
      await owner.admin.appConnections.aws.update({
        params: { connectionId: owner.awsConnectionId },
        body: { credentials: { roleArn } },
      }),
    ).appConnection;
    expect(updated).toMatchObject({ method: "assume-role", credentials: {} });
    const listed = expectOk(await owner.admin.appConnections.aws.list({ query: {} }));
    expect(listed.appConnections.find((c) => c.id === owner.awsConnectionId)?.credentials).toEqual({});
    const options = expectOk(await owner.admin.appConnections.options());
    expect(options.appConnectionOptions.find((o) => o.app === "aws")?.methods).toEqual(["access-key", "assume-role"]);
  });
});
