import { describe, expect, it } from "vitest";
import { createSecretsScope, putSecret } from "./helpers";

const RAW = "/api/v3/secrets/raw";

describe("secret metadata", () => {
  it("stores secretMetadata on create, replaces it on update and returns it on list and get", async () => {
    const { http, projectId } = await createSecretsScope();
    await putSecret(http, projectId, "M", "v", {
      secretMetadata: [
        { key: "team", value: "core" },
        { key: "token", value: "s3cret", isEncrypted: true },
      ],
    });
    const q = { workspaceId: projectId, environment: "dev" };
    const got = await http.get(`${RAW}/M`, q);
    expect(got.body.secret.secretMetadata).toEqual([
      { key: "team", value: "core", isEncrypted: false },
      { key: "token", value: "s3cret", isEncrypted: true },
    ]);
    const rows = await http.get(RAW, q);
    expect(rows.body.secrets[0].secretMetadata).toHaveLength(2);
    await http.patch(`${RAW}/M`, { ...q, secretMetadata: [{ key: "team", value: "edge" }] });
    const after = await http.get(`${RAW}/M`, q);
    expect(after.body.secret.secretMetadata).toEqual([{ key: "team", value: "edge", isEncrypted: false }]);
    await http.patch(`${RAW}/M`, { ...q, secretValue: "v2" });
    expect((await http.get(`${RAW}/M`, q)).body.secret.secretMetadata).toHaveLength(1);
  });

  it("filters lists by metadata key, value or both", async () => {
    const { http, projectId } = await createSecretsScope();
    await putSecret(http, projectId, "A", "1", { secretMetadata: [{ key: "team", value: "core" }] });
    await putSecret(http, projectId, "B", "2", { secretMetadata: [{ key: "team", value: "edge" }] });
    await putSecret(http, projectId, "C", "3", { secretMetadata: [{ key: "owner", value: "core" }] });
    await putSecret(http, projectId, "D", "4");
    const keys = async (metadataFilter: string) => {
      const res = await http.get(RAW, { workspaceId: projectId, environment: "dev", metadataFilter });
      expect(res.status).toBe(200);
      return (res.body.secrets as { secretKey: string }[]).map((s) => s.secretKey).sort();
    };
    expect(await keys("key=team")).toEqual(["A", "B"]);
    expect(await keys("value=core")).toEqual(["A", "C"]);
    expect(await keys("key=team,value=core")).toEqual(["A"]);
    expect(await keys("key=team,value=core|key=owner")).toEqual([]);
  });

  it("rejects malformed and oversized metadata filters with 422", async () => {
    const { http, projectId } = await createSecretsScope();
    const q = { workspaceId: projectId, environment: "dev" };
    const bad = await http.get(RAW, { ...q, metadataFilter: "nothing" });
    expect(bad.status).toBe(422);
    expect(JSON.stringify(bad.body)).toContain("key or value must be provided");
    const many = Array.from({ length: 11 }, (_, i) => `key=k${i}`).join("|");
    const tooMany = await http.get(RAW, { ...q, metadataFilter: many });
    expect(tooMany.status).toBe(422);
    expect(JSON.stringify(tooMany.body)).toContain("You can only filter by up to 10 metadata fields");
  });

  it("rejects metadata beyond its bounds with 422", async () => {
    const { http, projectId } = await createSecretsScope();
    const res = await http.post(`${RAW}/BIG`, {
      workspaceId: projectId,
      environment: "dev",
      secretValue: "v",
      secretMetadata: [{ key: "", value: "x" }],
    });
    expect(res.status).toBe(422);
  });
});
