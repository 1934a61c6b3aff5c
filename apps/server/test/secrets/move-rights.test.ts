import { describe, expect, it } from "vitest";
import type { KeywardClient } from "@keyward/client";
import { createSecretsScope, expectOk, expectWritten, identityWithRules, type SecretsScope } from "./helpers";

const ALL = ["describeSecret", "readValue", "create", "edit", "delete"];
const DESTINATION_VALUE = "s3cret";

/** The admin's DB_PASS in prod, which the callers below try to learn about by moving their own there. */
const scopeWithProdSecret = async () => {
  const scope = await createSecretsScope();
  expectOk(
    await scope.tenant.admin.secretsV4.create({
      params: { secretName: "DB_PASS" },
      body: { projectId: scope.projectId, environment: "prod", secretPath: "/", secretValue: DESTINATION_VALUE },
    }),
  );
  return scope;
};

/** Writes `key` in dev with `value` as the caller (creating or updating it) and returns its id. */
const putInDev = async (client: KeywardClient, scope: SecretsScope, key: string, value: string) => {
  const body = { projectId: scope.projectId, environment: "dev", secretPath: "/", secretValue: value };
  const updated = await client.secretsV4.update({ params: { secretName: key }, body });
  if (updated.status === 200 && "secret" in updated.body) return updated.body.secret.id;
  return expectWritten(await client.secretsV4.create({ params: { secretName: key }, body })).secret.id;
};

const moveToProd = async (client: KeywardClient, scope: SecretsScope, secretId: string, shouldOverwrite = false) => {
  const res = await client.secretsMove.move({
    body: {
      projectId: scope.projectId,
      sourceEnvironment: "dev",
      sourceSecretPath: "/",
      destinationEnvironment: "prod",
      destinationSecretPath: "/",
      secretIds: [secretId],
      shouldOverwrite,
    },
  });
  // The request id differs on every answer; everything else is what the caller learns.
  const { reqId: _reqId, ...body } = res.body as Record<string, unknown>;
  return { status: res.status, body };
};

const prodSecret = async (scope: SecretsScope) =>
  expectOk(
    await scope.tenant.admin.secretsV4.get({
      params: { secretName: "DB_PASS" },
      query: { projectId: scope.projectId, environment: "prod", secretPath: "/" },
    }),
  ).secret;

/** A right guess of DB_PASS, a wrong one and an absent key all answer the same 403, and prod is unchanged. */
const expectSameRefusalForEveryGuess = async (client: KeywardClient, scope: SecretsScope) => {
  const answers = [];
  for (const [key, value] of [
    ["DB_PASS", DESTINATION_VALUE],
    ["DB_PASS", "wrong guess"],
    ["NOT_IN_PROD", DESTINATION_VALUE],
  ] as const)
    answers.push(await moveToProd(client, scope, await putInDev(client, scope, key, value)));
  expect(answers[0]).toMatchObject({ status: 403, body: { message: "You are not allowed to create on secrets" } });
  expect(answers[1]).toEqual(answers[0]);
  expect(answers[2]).toEqual(answers[0]);
  expect(await prodSecret(scope)).toMatchObject({ secretValue: DESTINATION_VALUE, version: 1 });
};

describe("moving secrets tells the caller nothing about destination values it may not read", () => {
  it("answers the same 403 to a caller without destination rights whether its value matches, differs or the key is absent", async () => {
    const scope = await scopeWithProdSecret();
    const caller = await identityWithRules(scope, [
      { subject: "secrets", action: ALL, inverted: false, conditions: { environment: "dev" } },
    ]);
    await expectSameRefusalForEveryGuess(caller.client, scope);
  });

  it("answers the same 403 when the caller's destination rights cover other names, whether its value matches, differs or the key is absent", async () => {
    const scope = await scopeWithProdSecret();
    const caller = await identityWithRules(scope, [
      { subject: "secrets", action: ALL, inverted: false, conditions: { environment: "dev" } },
      {
        subject: "secrets",
        action: ALL,
        inverted: false,
        conditions: { environment: "prod", secretName: { $glob: "PUBLIC_*" } },
      },
    ]);
    await expectSameRefusalForEveryGuess(caller.client, scope);
  });

  it("answers the same to a caller who may write but not read values in the destination, whether its value matches or not", async () => {
    const scope = await scopeWithProdSecret();
    const caller = await identityWithRules(scope, [
      { subject: "secrets", action: ALL, inverted: false, conditions: { environment: "dev" } },
      {
        subject: "secrets",
        action: ["describeSecret", "create", "edit"],
        inverted: false,
        conditions: { environment: "prod" },
      },
    ]);
    const right = await moveToProd(
      caller.client,
      scope,
      await putInDev(caller.client, scope, "DB_PASS", DESTINATION_VALUE),
    );
    const wrong = await moveToProd(
      caller.client,
      scope,
      await putInDev(caller.client, scope, "DB_PASS", "wrong guess"),
    );
    expect(right).toEqual(wrong);
    expect(right).toMatchObject({
      status: 400,
      body: { message: "Failed to move secrets. The following secrets already exist in the destination: DB_PASS" },
    });
    expect(await prodSecret(scope)).toMatchObject({ secretValue: DESTINATION_VALUE, version: 1 });
  });

  it("overwrites a destination value the caller may not read even when it matches, as it would any other", async () => {
    const scope = await scopeWithProdSecret();
    const caller = await identityWithRules(scope, [
      { subject: "secrets", action: ALL, inverted: false, conditions: { environment: "dev" } },
      {
        subject: "secrets",
        action: ["describeSecret", "create", "edit"],
        inverted: false,
        conditions: { environment: "prod" },
      },
    ]);
    const id = await putInDev(caller.client, scope, "DB_PASS", DESTINATION_VALUE);
    expect(await moveToProd(caller.client, scope, id, true)).toEqual({
      status: 200,
      body: { isSourceUpdated: true, isDestinationUpdated: true },
    });
    expect(await prodSecret(scope)).toMatchObject({ secretValue: DESTINATION_VALUE, version: 2 });
  });

  it("still skips a matching value the caller may read in the destination", async () => {
    const scope = await scopeWithProdSecret();
    const caller = await identityWithRules(scope, [{ subject: "secrets", action: ALL, inverted: false }]);
    const id = await putInDev(caller.client, scope, "DB_PASS", DESTINATION_VALUE);
    expect(await moveToProd(caller.client, scope, id)).toMatchObject({
      status: 400,
      body: { message: "Selected secrets already exist in the destination." },
    });
  });

  it("refuses a caller without any right in the destination folder before looking at the selected ids", async () => {
    const scope = await scopeWithProdSecret();
    const caller = await identityWithRules(scope, [
      { subject: "secrets", action: ALL, inverted: false, conditions: { environment: "dev" } },
    ]);
    const unknownId = "6f1c1d2e-8a4b-4c3d-9e2f-1a2b3c4d5e6f";
    expect(await moveToProd(caller.client, scope, unknownId)).toMatchObject({
      status: 403,
      body: { message: "You are not allowed to create on secrets" },
    });
  });

  it("refuses to carry a tag into the destination that the caller may not write under there", async () => {
    const scope = await scopeWithProdSecret();
    const { projectId } = scope;
    const tag = expectOk(
      await scope.tenant.admin.secretTags.projects.create({
        params: { projectId },
        body: { slug: "admin", color: "" },
      }),
    ).tag;
    const caller = await identityWithRules(scope, [
      { subject: "secrets", action: ALL, inverted: false },
      {
        subject: "secrets",
        action: ["create", "edit"],
        inverted: true,
        conditions: { environment: "prod", secretTags: { $in: ["admin"] } },
      },
    ]);
    const moved = expectWritten(
      await caller.client.secretsV4.create({
        params: { secretName: "TAGGED" },
        body: { projectId, environment: "dev", secretPath: "/", secretValue: "t", tagIds: [tag.id] },
      }),
    ).secret;
    expect(await moveToProd(caller.client, scope, moved.id)).toMatchObject({
      status: 403,
      body: { message: "You are not allowed to create on secrets" },
    });
  });
});
