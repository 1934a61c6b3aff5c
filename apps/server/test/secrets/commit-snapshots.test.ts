import { describe, expect, it } from "vitest";
import { createTenant } from "../helpers/tenant";
import { createSecretsScope, expectOk, identityWithRules, putSecret } from "./helpers";

const RAW = "/api/v3/secrets/raw";

describe("secret snapshots, as views over commits", () => {
  it("lists, counts, reads and rolls back to a snapshot, with the older API's rights", async () => {
    const scope = await createSecretsScope();
    await putSecret(scope.http, scope.projectId, "A", "a1");
    const base = { workspaceId: scope.projectId, environment: "dev" };
    expect((await scope.http.patch(`${RAW}/A`, { ...base, secretValue: "a2" })).status).toBe(200);
    const snapshots = scope.tenant.admin.secretSnapshots;
    const query = { environment: "dev", path: "/" };
    const { secretSnapshots } = expectOk(
      await snapshots.list({ params: { workspaceId: scope.projectId }, query: { ...query, offset: 0, limit: 20 } }),
    );
    expect(secretSnapshots).toHaveLength(3);
    expect(secretSnapshots[0]).toMatchObject({ parentFolderId: null });
    expect(expectOk(await snapshots.count({ params: { workspaceId: scope.projectId }, query }))).toEqual({ count: 3 });
    const older = secretSnapshots[1]!;
    const read = expectOk(await snapshots.get({ params: { secretSnapshotId: older.id } })).secretSnapshot;
    expect(read.environment.slug).toBe("dev");
    expect(read.secretVersions.map((v) => [v.secretKey, v.secretValue, v.version])).toEqual([["A", "a1", 1]]);

    const describer = await identityWithRules(scope, [
      { subject: "secret-rollback", action: ["read"], inverted: false },
      { subject: "secrets", action: ["describeSecret"], inverted: false },
    ]);
    const masked = expectOk(await describer.client.secretSnapshots.get({ params: { secretSnapshotId: older.id } }));
    expect(masked.secretSnapshot.secretVersions[0]).toMatchObject({ secretValueHidden: true });
    const refused = await describer.client.secretSnapshots.rollback({
      params: { secretSnapshotId: older.id },
      body: {},
    });
    expect(refused.status).toBe(403);
    const nobody = await identityWithRules(scope, [{ subject: "secrets", action: ["read"], inverted: false }]);
    expect((await nobody.client.secretSnapshots.get({ params: { secretSnapshotId: older.id } })).status).toBe(403);
    const other = await createTenant();
    const foreign = await other.admin.secretSnapshots.get({ params: { secretSnapshotId: older.id } });
    expect(foreign).toMatchObject({
      status: 404,
      body: { message: `Secret snapshot with ID '${older.id}' not found` },
    });

    const rolled = expectOk(await snapshots.rollback({ params: { secretSnapshotId: older.id }, body: {} }));
    expect(rolled).toMatchObject({ secretSnapshot: { id: older.id } });
    const now = await scope.http.get(`${RAW}/A`, base);
    expect(now.body.secret).toMatchObject({ secretValue: "a1", version: 3 });
  });
});
