import { InfisicalSDK } from "@infisical/sdk";
import { describe, expect, it } from "vitest";
import { addImport, createFolder, createSecretsScope, putSecret } from "./helpers";

/** The official SDK's six secrets() methods, unchanged, against Keyward. */
describe("@infisical/sdk v5 secrets() against Keyward", () => {
  it("creates, reads, updates, lists (with imports and process env) and deletes secrets", async () => {
    const scope = await createSecretsScope();
    const { projectId, tenant, http } = scope;
    const sdk = new InfisicalSDK({ siteUrl: tenant.app.baseUrl });
    sdk.auth().accessToken(tenant.adminToken);
    const secrets = sdk.secrets();

    await createFolder(tenant, projectId, "dev", "/", "shared-a");
    await createFolder(tenant, projectId, "dev", "/", "shared-b");
    await putSecret(http, projectId, "FROM_A", "a", { secretPath: "/shared-a" });
    await putSecret(http, projectId, "BOTH", "from-a", { secretPath: "/shared-a" });
    await putSecret(http, projectId, "BOTH", "from-b", { secretPath: "/shared-b" });
    await addImport(tenant, projectId, "/", { environment: "dev", path: "/shared-a" });
    await addImport(tenant, projectId, "/", { environment: "dev", path: "/shared-b" });

    const created = (await secrets.createSecret("SDK_KEY", {
      projectId,
      environment: "dev",
      secretValue: "one",
      secretComment: "made by the SDK",
    })) as { secret: { secretKey: string; version: number } };
    expect(created.secret).toMatchObject({ secretKey: "SDK_KEY", version: 1 });
    await secrets.createSecret("REF", { projectId, environment: "dev", secretValue: "x-${SDK_KEY}" });

    const one = await secrets.getSecret({ projectId, environment: "dev", secretName: "REF" });
    expect(one.secretValue).toBe("x-one");
    const raw = await secrets.getSecret({
      projectId,
      environment: "dev",
      secretName: "REF",
      expandSecretReferences: false,
    });
    expect(raw.secretValue).toBe("x-${SDK_KEY}");
    const imported = await secrets.getSecret({
      projectId,
      environment: "dev",
      secretName: "BOTH",
      includeImports: true,
    });
    expect(imported.secretValue).toBe("from-b");

    const updated = (await secrets.updateSecret("SDK_KEY", {
      projectId,
      environment: "dev",
      secretValue: "two",
      newSecretName: "SDK_KEY2",
    })) as { secret: { secretKey: string; version: number } };
    expect(updated.secret).toMatchObject({ secretKey: "SDK_KEY2", version: 2 });

    const listed = await secrets.listSecrets({ projectId, environment: "dev", expandSecretReferences: false });
    expect(listed.secrets.map((s) => s.secretKey).sort()).toEqual(["REF", "SDK_KEY2"]);
    expect(listed.imports).toEqual([]);

    delete process.env.BOTH;
    delete process.env.FROM_A;
    await secrets.listSecrets({ projectId, environment: "dev", includeImports: true, attachToProcessEnv: true });
    // The SDK merges forward: the first import wins.
    expect(process.env.BOTH).toBe("from-a");
    expect(process.env.FROM_A).toBe("a");
    expect(process.env.SDK_KEY2).toBe("two");

    const withImports = await secrets.listSecretsWithImports({ projectId, environment: "dev" });
    expect(Object.fromEntries(withImports.map((s) => [s.secretKey, s.secretValue]))).toMatchObject({
      BOTH: "from-a",
      FROM_A: "a",
      SDK_KEY2: "two",
      // The rename rewrote REF's reference to the new name, so it expands again.
      REF: "x-two",
    });

    const deleted = (await secrets.deleteSecret("SDK_KEY2", { projectId, environment: "dev" })) as {
      secret: { secretKey: string };
    };
    expect(deleted.secret.secretKey).toBe("SDK_KEY2");
    await expect(secrets.getSecret({ projectId, environment: "dev", secretName: "SDK_KEY2" })).rejects.toThrow(
      /StatusCode=404.*not found/,
    );
  });
});
