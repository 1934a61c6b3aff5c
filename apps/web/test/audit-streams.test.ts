import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createKeywardClient, ok } from "@keyward/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browserPerTest, screenshot, signInWithToken } from "./browser";
import { testContext } from "./context";

const { baseUrl, browserEndpoint, seeded } = testContext();
const admin = createKeywardClient({ baseUrl, token: seeded.token });

const ui = browserPerTest(browserEndpoint);

/** A receiver on loopback: records every delivery, and answers 503 while `failing` is set. */
const deliveries: { headers: IncomingHttpHeaders; body: string }[] = [];
let failing = false;
let receiver: Server;
let receiverUrl: string;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => {
      deliveries.push({ headers: req.headers, body });
      res.writeHead(failing ? 503 : 200).end(failing ? "receiver down for maintenance" : "ok");
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/keyward`;
});
afterAll(async () => {
  await new Promise((resolve) => receiver?.close(resolve));
});

const until = async (check: () => boolean, what: string) => {
  for (let i = 0; i < 150 && !check(); i += 1) await new Promise((resolve) => setTimeout(resolve, 100));
  if (!check()) throw new Error(`timed out waiting for ${what}`);
};

describe("the audit streams page", () => {
  it("adds a stream (pinged first), shows its signing secret once, shows a failing receiver, and deletes it", async () => {
    const { project } = await ok(admin.projects.create({ body: { projectName: "Streamed", type: "secret-manager" } }));
    await signInWithToken(ui.page, baseUrl, seeded.token);
    await ui.page.goto(`${baseUrl}/audit-log`);
    await ui.page.getByRole("link", { name: "Streams" }).click();
    const form = ui.page.getByRole("form", { name: "Add a stream" });
    await form.getByLabel("Receiver URL").fill(receiverUrl);
    await form.getByLabel("Header name (optional)").fill("Authorization");
    await form.getByLabel("Header value").fill("Bearer siem-token");
    await form.getByRole("button", { name: "Add stream" }).click();
    const added = form.getByRole("status").filter({ hasText: "shown this once" });
    await added.waitFor();
    expect(deliveries.at(-1)).toMatchObject({ headers: { authorization: "Bearer siem-token" } });
    await added.getByRole("button", { name: "Reveal signing secret" }).click();
    expect((await added.getByTestId("secret-value").textContent())?.length).toBeGreaterThan(20);

    const table = ui.page.getByRole("table", { name: "Audit streams" });
    const row = table.getByRole("row").filter({ hasText: receiverUrl });
    await row.getByText("Authorization").waitFor();
    expect(await row.textContent()).not.toContain("siem-token");

    // An event reaches the receiver, signed.
    const seen = deliveries.length;
    await ok(
      admin.secretsV3.create({
        params: { secretName: "STREAMED" },
        body: { workspaceId: project.id, environment: "dev", secretPath: "/", secretValue: "never-in-an-event" },
      }),
    );
    await until(() => deliveries.slice(seen).some((d) => d.body.includes("create-secret")), "the event's delivery");
    const delivery = deliveries.slice(seen).find((d) => d.body.includes("create-secret"))!;
    expect(delivery.headers["x-keyward-signature"]).toBeTruthy();
    expect(delivery.body).not.toContain("never-in-an-event");
    await row.getByText("up to date").waitFor();

    // The receiver fails: the page says so with its answer, within its refresh.
    failing = true;
    await ok(
      admin.secretsV3.create({
        params: { secretName: "STREAMED_TOO" },
        body: { workspaceId: project.id, environment: "dev", secretPath: "/", secretValue: "x" },
      }),
    );
    await row.getByText("failing").waitFor({ timeout: 30_000 });
    // The status in the error, not a bare /503/: the receiver's port (in the row's URL) may contain it.
    await row.getByText(/status code 503/).waitFor();
    await screenshot(ui.page, "audit-streams");
    failing = false;

    ui.page.once("dialog", (dialog) => void dialog.accept());
    await row.getByRole("button", { name: /^Delete/ }).click();
    await row.waitFor({ state: "detached" });
    expect((await ok(admin.auditLogStreams.list())).auditLogStreams).toEqual([]);
    expect(ui.watcher.unexpected()).toEqual([]);
  });

  it("refuses a receiver that does not answer, and shows the contract's rule for the URL", async () => {
    await signInWithToken(ui.page, baseUrl, seeded.token);
    await ui.page.goto(`${baseUrl}/audit-log/streams`);
    const form = ui.page.getByRole("form", { name: "Add a stream" });
    await form.getByLabel("Receiver URL").fill("not a url");
    await form.getByRole("button", { name: "Add stream" }).click();
    await form.locator(".field-error").waitFor();
    // Nobody listens on port 9 of loopback: the ping fails and nothing is saved.
    await form.getByLabel("Receiver URL").fill("http://127.0.0.1:9/keyward");
    await form.getByRole("button", { name: "Add stream" }).click();
    await form.getByRole("alert").waitFor();
    expect((await ok(admin.auditLogStreams.list())).auditLogStreams).toEqual([]);
    expect(ui.watcher.unexpected([400, 422, 502])).toEqual([]);
  });
});
