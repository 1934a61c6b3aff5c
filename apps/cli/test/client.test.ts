import { inject, describe, expect, it } from "vitest";
import { createKeywardClient, KeywardError, ok } from "@keyward/client";
import { url } from "./helpers";

/** The published client's behaviours a CLI relies on, against the real server. */
describe("@keyward/client against a server", () => {
  it("validates success bodies with the contract when asked", async () => {
    const client = createKeywardClient({ baseUrl: `${url()}/`, token: inject("adminToken"), validateResponse: true });
    const { projects } = await ok(client.projects.list());
    expect(Array.isArray(projects)).toBe(true);
  });

  it("narrows an error to the spec's body, and ok() throws it as a KeywardError", async () => {
    const client = createKeywardClient({ baseUrl: url(), token: inject("adminToken") });
    const response = await client.projects.get({ params: { projectId: "00000000-0000-0000-0000-000000000000" } });
    expect(response.status).toBe(404);
    if (response.status !== 200) expect(typeof response.body.reqId).toBe("string");

    const thrown = await ok(
      client.projects.get({ params: { projectId: "00000000-0000-0000-0000-000000000000" } }),
    ).catch((error: unknown) => error);
    expect(thrown).toBeInstanceOf(KeywardError);
    expect((thrown as KeywardError).status).toBe(404);
    expect((thrown as KeywardError).body?.error).toBeTruthy();
  });

  it("marks a 401 as unauthorized", async () => {
    const client = createKeywardClient({ baseUrl: url(), token: "wrong" });
    const thrown = (await ok(client.projects.list()).catch((error: unknown) => error)) as KeywardError;
    expect(thrown.isUnauthorized).toBe(true);
  });
});
