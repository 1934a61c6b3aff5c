import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createKeywardClient, ok } from "@keyward/client";
import { PG15_BIN } from "@keyward/test-services";
import type { Locator, Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { browserPerTest, screenshot, signInWithToken } from "./browser";
import { testContext } from "./context";
import { projectMemberToken } from "./members";

const { baseUrl, browserEndpoint, seeded, postgres: target } = testContext();
const admin = createKeywardClient({ baseUrl, token: seeded.token });

const ui = browserPerTest(browserEndpoint);

let project: { id: string; orgId: string };
let connectionId: string;

/** One statement run with psql over TCP (password login), its rows as plain text. */
const psql = (url: string, statement: string) =>
  execFileSync(`${PG15_BIN}/psql`, [url, "-v", "ON_ERROR_STOP=1", "-qAtc", statement], {
    encoding: "utf8",
    timeout: 30_000,
  }).trim();

const loginUrl = (user: string, password: string) =>
  `postgres://${user}:${encodeURIComponent(password)}@${target.host}:${target.port}/postgres`;

beforeAll(async () => {
  project = (await ok(admin.projects.create({ body: { projectName: "Orders rotations", type: "secret-manager" } })))
    .project;
  const { appConnection } = await ok(
    admin.appConnections.postgres.create({
      body: {
        name: "orders-postgres",
        credentials: {
          host: target.host,
          port: target.port,
          database: "postgres",
          username: "postgres",
          password: target.password,
          sslEnabled: false,
        },
      },
    }),
  );
  connectionId = appConnection.id;
});

/** Two login roles, a folder of their own and a PostgreSQL rotation of them, made through the API. */
const createRotation = async (name: string) => {
  const users = ["a", "b"].map((slot) => `${name.replace(/-/g, "_")}_${slot}`) as [string, string];
  for (const user of users)
    psql(target.url, `create role ${user} login password 'initial-${randomBytes(6).toString("hex")}'`);
  await ok(admin.folders.create({ body: { workspaceId: project.id, environment: "dev", path: "/", name } }));
  const { secretRotation } = await ok(
    admin.secretRotations.postgresCredentials.create({
      body: {
        name,
        projectId: project.id,
        connectionId,
        environment: "dev",
        secretPath: `/${name}`,
        rotationInterval: 30,
        rotateAtUtc: { hours: 2, minutes: 30 },
        parameters: { username1: users[0], username2: users[1] },
        secretsMapping: { username: "DB_USERNAME", password: "DB_PASSWORD" },
      },
    }),
  );
  return { rotation: secretRotation, users };
};

const readRotation = async (rotationId: string) =>
  (await ok(admin.secretRotations.postgresCredentials.get({ params: { rotationId } }))).secretRotation;

const readSecret = async (name: string, secretName: string) =>
  (
    await ok(
      admin.secretsV4.get({
        params: { secretName },
        query: { projectId: project.id, environment: "dev", secretPath: `/${name}` },
      }),
    )
  ).secret.secretValue;

/** A time as the console shows it (the browser's locale and zone, to the second). */
const shown = (page: Page, value: string | null) =>
  page.evaluate(
    (v) => (v ? new Date(v).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" }) : "—"),
    value,
  );

const openRotations = async (token: string) => {
  await signInWithToken(ui.page, baseUrl, token);
  await ui.page.goto(`${baseUrl}/projects/${project.id}`);
  await ui.page.getByRole("navigation", { name: "Project sections" }).getByRole("link", { name: "Rotations" }).click();
  return ui.page.getByRole("table", { name: "Secret rotations" });
};

const rowOf = (table: Locator, name: string) =>
  table.getByRole("row").filter({ has: ui.page.getByRole("rowheader", { name, exact: true }) });

const cellText = async (row: Locator, testId: string) => (await row.getByTestId(testId).innerText()).trim();

describe("the secret rotations screen", () => {
  it("lists a rotation with its status and next run, rotates it now (the row follows) and turns auto-rotation off", async () => {
    const { rotation, users } = await createRotation("orders-db");
    expect(rotation).toMatchObject({ rotationStatus: "success", activeIndex: 0, isLastRotationManual: false });
    const table = await openRotations(seeded.token);
    const row = rowOf(table, "orders-db");
    await row.getByTestId("rotation-status").getByText("rotated").waitFor();
    await row.getByRole("button", { name: "Turn off auto-rotation orders-db" }).waitFor();
    const text = await row.innerText();
    for (const part of ["PostgreSQL Credentials", "dev /orders-db", "every 30 days at 02:30 UTC"])
      expect(text).toContain(part);
    expect(await cellText(row, "active-user")).toBe(users[0]);
    expect(rotation.nextRotationAt).not.toBeNull();
    expect(await cellText(row, "next-rotation")).toBe(await shown(ui.page, rotation.nextRotationAt));
    const lastBefore = await cellText(row, "last-rotated");
    expect(lastBefore).toBe(await shown(ui.page, rotation.lastRotatedAt));
    await screenshot(ui.page, "rotations");

    // Times are shown to the second: rotate in a later second than the create's rotation.
    const wait = Date.parse(rotation.lastRotatedAt!) + 1_100 - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    await row.getByRole("button", { name: "Rotate now orders-db" }).click();
    await row.getByTestId("active-user").getByText(users[1], { exact: true }).waitFor();
    const rotated = await readRotation(rotation.id);
    expect(rotated).toMatchObject({ activeIndex: 1, rotationStatus: "success", isLastRotationManual: true });
    expect(Date.parse(rotated.lastRotatedAt!)).toBeGreaterThan(Date.parse(rotation.lastRotatedAt!));
    const lastAfter = await cellText(row, "last-rotated");
    expect(lastAfter).not.toBe(lastBefore);
    expect(lastAfter).toContain(await shown(ui.page, rotated.lastRotatedAt));
    expect(lastAfter).toContain("manual");
    expect(await cellText(row, "rotation-status")).toBe("rotated");
    // The folder's secrets now name the second user, whose new password logs in.
    expect(await readSecret("orders-db", "DB_USERNAME")).toBe(users[1]);
    expect(psql(loginUrl(users[1], await readSecret("orders-db", "DB_PASSWORD")), "select current_user")).toBe(
      users[1],
    );

    await row.getByRole("button", { name: "Turn off auto-rotation orders-db" }).click();
    await row.getByRole("button", { name: "Turn on auto-rotation orders-db" }).waitFor();
    expect(await cellText(row, "next-rotation")).toBe("—");
    expect(await readRotation(rotation.id)).toMatchObject({ isAutoRotationEnabled: false, nextRotationAt: null });
    expect(ui.watcher.unexpected()).toEqual([]);
  });

  it("shows the server's refusal to a viewer, who may list rotations but not rotate them", async () => {
    const { rotation, users } = await createRotation("billing-db");
    const viewer = await projectMemberToken(admin, project, "rotation-viewer", "viewer");
    const table = await openRotations(viewer.token);
    const row = rowOf(table, "billing-db");
    await row.getByTestId("rotation-status").getByText("rotated").waitFor();
    await row.getByRole("button", { name: "Rotate now billing-db" }).click();
    const alert = table.getByRole("alert");
    await alert.waitFor();
    expect(await alert.innerText()).toBe("Not allowed: You are not allowed to rotate-secrets on secret-rotation");
    expect(await cellText(row, "active-user")).toBe(users[0]);
    const after = await readRotation(rotation.id);
    expect(after).toMatchObject({ activeIndex: 0, lastRotatedAt: rotation.lastRotatedAt, rotationStatus: "success" });
    expect(ui.watcher.unexpected([403])).toEqual([]);
  });

  it("shows a failed rotation's cause on its row when the user to change is gone from the database", async () => {
    const { rotation, users } = await createRotation("ledger-db");
    // The inactive user, the one the next rotation changes, no longer exists.
    psql(target.url, `drop role ${users[1]}`);
    const table = await openRotations(seeded.token);
    const row = rowOf(table, "ledger-db");
    await row.getByTestId("rotation-status").getByText("rotated").waitFor();
    await row.getByRole("button", { name: "Rotate now ledger-db" }).click();
    const alert = table.getByRole("alert");
    await alert.waitFor();
    expect(await alert.innerText()).toMatch(/^The rotation failed and will be retried: .*ledger_db_b/);
    await row.getByTestId("rotation-status").getByText("failed").waitFor();
    const failed = await readRotation(rotation.id);
    expect(failed).toMatchObject({ rotationStatus: "failed", activeIndex: 0, lastRotatedAt: rotation.lastRotatedAt });
    expect(failed.lastRotationMessage).toContain(users[1]);
    await row.getByText(failed.lastRotationMessage!, { exact: true }).waitFor();
    await row.getByText(`Attempted ${await shown(ui.page, failed.lastRotationAttemptedAt)}`).waitFor();
    expect(await cellText(row, "active-user")).toBe(users[0]);
    expect(await readSecret("ledger-db", "DB_USERNAME")).toBe(users[0]);
    expect(ui.watcher.unexpected([400])).toEqual([]);
  });
});
