import { describe, expect, it } from "vitest";
import { awsParameterStore } from "./destinations/aws-parameter-store";
import { awsSecretsManager } from "./destinations/aws-secrets-manager";
import { gitHub } from "./destinations/github";
import type { DestinationDriver, FoundSecret } from "./destinations/destination";
import { applyKeySchema, desiredOf, matchesKeySchema, planRun, type SyncOptions } from "./sync-plan";

const found = (entries: Record<string, string | undefined>) =>
  new Map<string, FoundSecret>(Object.entries(entries).map(([name, value]) => [name, { name, value }]));

const hmacOf = (name: string, value: string) => `${name}=${value}`;

const plan = (
  driver: DestinationDriver,
  input: {
    desired: Record<string, string>;
    found: Record<string, string | undefined>;
    owned?: Record<string, string | null>;
    elsewhere?: string[];
    options?: SyncOptions;
    readBack?: boolean;
  },
) =>
  planRun({
    driver,
    config: { path: "/app/", mappingBehavior: "one-to-one" },
    environment: "dev",
    options: input.options ?? {},
    desired: new Map(Object.entries(input.desired)),
    invalid: [],
    found: found(input.found),
    owned: new Map(Object.entries(input.owned ?? {})),
    ownedElsewhere: new Set(input.elsewhere ?? []),
    readBack: input.readBack ?? true,
    hmacOf,
  });

describe("a sync's plan", () => {
  it("never writes or deletes a destination secret it did not write, by default", () => {
    const p = plan(awsSecretsManager, {
      desired: { SHARED: "mine", NEW: "n" },
      found: { SHARED: "theirs", FOREIGN: "f" },
    });
    expect(p.create).toEqual(["NEW"]);
    expect(p.update).toEqual([]);
    expect(p.delete).toEqual([]);
    expect(p.skipped).toEqual([{ key: "SHARED", reason: "exists-unowned" }]);
  });

  it("updates and deletes only what it owns, and forgets owned names that are gone", () => {
    const p = plan(awsSecretsManager, {
      desired: { A: "new", B: "same" },
      found: { A: "old", B: "same", GONE: "x", FOREIGN: "f" },
      owned: { A: "h", B: hmacOf("B", "same"), GONE: "h", VANISHED: "h" },
    });
    expect(p.update).toEqual(["A"]);
    expect(p.unchanged).toEqual(["B"]);
    expect(p.delete).toEqual(["GONE"]);
    expect(p.forget).toEqual(["VANISHED"]);
    expect([...p.adopt.keys()]).toEqual([]);
  });

  it("leaves a name another sync owns to that sync", () => {
    const p = plan(awsSecretsManager, { desired: { A: "1" }, found: {}, elsewhere: ["A"] });
    expect(p.create).toEqual([]);
    expect(p.skipped).toEqual([{ key: "A", reason: "owned-by-another-sync" }]);
  });

  it("takes unowned names over only with unownedSecrets overwrite, and deletes them only with delete", () => {
    const over = plan(awsSecretsManager, {
      desired: { SHARED: "mine", SAME: "s" },
      found: { SHARED: "theirs", SAME: "s", FOREIGN: "f" },
      options: { unownedSecrets: "overwrite" },
    });
    expect(over.update).toEqual(["SHARED"]);
    expect([...over.adopt.keys()]).toEqual(["SAME"]);
    expect(over.delete).toEqual([]);
    const mirror = plan(awsSecretsManager, {
      desired: {},
      found: { APP_X: "x", OTHER: "o" },
      options: { unownedSecrets: "delete", keySchema: "APP_{{secretKey}}" },
    });
    expect(mirror.delete).toEqual(["APP_X"]);
  });

  it("keeps owned secrets with deletion disabled", () => {
    const p = plan(awsSecretsManager, {
      desired: {},
      found: { A: "1" },
      owned: { A: "h" },
      options: { disableSecretDeletion: true },
    });
    expect(p.delete).toEqual([]);
  });

  it("skips empty values where the destination cannot hold them, and writes GitHub's", () => {
    expect(plan(awsParameterStore, { desired: { E: "" }, found: {} }).skipped).toEqual([
      { key: "E", reason: "empty-value" },
    ]);
    expect(plan(gitHub, { desired: { E: "" }, found: {} }).create).toEqual(["E"]);
  });

  it("rewrites a GitHub secret only when its value changed since it was written", () => {
    const p = plan(gitHub, {
      desired: { A: "1", B: "2" },
      found: { A: undefined, B: undefined },
      owned: { A: hmacOf("A", "1"), B: hmacOf("B", "old") },
    });
    expect(p.unchanged).toEqual(["A"]);
    expect(p.update).toEqual(["B"]);
  });

  it("compares by the recorded HMAC when values are not read back, and reports drift only when they are", () => {
    const owned = { A: hmacOf("A", "1"), B: hmacOf("B", "1") };
    const byRecord = plan(awsSecretsManager, {
      desired: { A: "1", B: "2" },
      found: { A: undefined, B: undefined },
      owned,
      readBack: false,
    });
    expect(byRecord.unchanged).toEqual(["A"]);
    expect(byRecord.update).toEqual(["B"]);
    expect(byRecord.drifted).toEqual([]);
    const readBack = plan(awsSecretsManager, { desired: { A: "1", B: "1" }, found: { A: "1", B: "edited" }, owned });
    expect(readBack.update).toEqual(["B"]);
    expect(readBack.drifted).toEqual(["B"]);
  });
});

describe("key schemas and names", () => {
  it("applies and matches a schema", () => {
    expect(applyKeySchema("APP_{{environment}}_{{secretKey}}", "DB", "dev")).toBe("APP_dev_DB");
    expect(matchesKeySchema("APP_{{secretKey}}", "APP_DB", "dev")).toBe(true);
    expect(matchesKeySchema("APP_{{secretKey}}", "OTHER", "dev")).toBe(false);
    expect(matchesKeySchema("a/{{secretKey}}", "a/b/c", "dev")).toBe(false);
    expect(matchesKeySchema(undefined, "anything", "dev")).toBe(true);
  });

  it("names keys the way each destination does", () => {
    const values = new Map([
      ["db_url", "x"],
      ["bad name", "y"],
    ]);
    expect(desiredOf(gitHub, {}, {}, "dev", values)).toEqual({
      desired: new Map([["DB_URL", "x"]]),
      invalid: ["bad name"],
    });
    expect(desiredOf(awsParameterStore, { path: "/p/" }, {}, "dev", new Map([["K", "v"]])).desired).toEqual(
      new Map([["/p/K", "v"]]),
    );
    const many = desiredOf(
      awsSecretsManager,
      { mappingBehavior: "many-to-one", secretName: "bundle" },
      { keySchema: "{{environment}}-{{secretKey}}" },
      "dev",
      new Map([["A", "1"]]),
    );
    expect(many.desired).toEqual(new Map([["dev-bundle", JSON.stringify({ A: "1" })]]));
  });
});
