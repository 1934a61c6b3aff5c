import { describe, expect, it } from "vitest";
import { createProject, createTenant } from "../helpers/tenant";
import { createFolder, createSecretsScope, putSecret, rawHttp } from "./helpers";

const V4 = "/api/v4/secrets";

describe("concurrent secret reads", () => {
  it("parallel gets across projects, folders and names each answer their own secret or error", async () => {
    const { tenant, http, projectId } = await createSecretsScope();
    const other = await createProject(tenant);
    await createFolder(tenant, projectId, "dev", "/", "app");
    for (let i = 0; i < 5; i += 1) {
      await putSecret(http, projectId, `ROOT_${i}`, `root-${i}`);
      await putSecret(http, projectId, `APP_${i}`, `app-${i}`, { secretPath: "/app" });
      await putSecret(http, other.id, `ROOT_${i}`, `other-${i}`);
    }
    const stranger = await createTenant();
    const strangerHttp = rawHttp(stranger.app.baseUrl, stranger.adminToken);

    const cases: { run: () => ReturnType<typeof http.get>; status: number; value?: string; message?: string }[] = [];
    for (let i = 0; i < 5; i += 1) {
      const q = { projectId, environment: "dev" };
      cases.push({ run: () => http.get(`${V4}/ROOT_${i}`, q), status: 200, value: `root-${i}` });
      cases.push({
        run: () => http.get(`${V4}/APP_${i}`, { ...q, secretPath: "/app" }),
        status: 200,
        value: `app-${i}`,
      });
      cases.push({
        run: () => http.get(`${V4}/ROOT_${i}`, { projectId: other.id, environment: "dev" }),
        status: 200,
        value: `other-${i}`,
      });
    }
    cases.push({
      run: () => http.get(`${V4}/APP_0`, { projectId, environment: "dev" }),
      status: 404,
      message: "Secret with name 'APP_0' not found",
    });
    cases.push({
      run: () => http.get(`${V4}/ROOT_0`, { projectId, environment: "dev", secretPath: "/nope" }),
      status: 404,
      message: "Folder with path '/nope' in environment with slug 'dev' not found",
    });
    // A name the database cannot hold is refused on its own, without failing the other requests.
    cases.push({ run: () => http.get(`${V4}/BAD%00NAME`, { projectId, environment: "dev" }), status: 400 });
    cases.push({
      run: () => strangerHttp.get(`${V4}/ROOT_0`, { projectId, environment: "dev" }),
      status: 404,
      message: `Project with ${projectId} not found`,
    });

    for (let round = 0; round < 2; round += 1) {
      const results = await Promise.all(cases.map((c) => c.run()));
      results.forEach((res, i) => {
        const expected = cases[i]!;
        expect(res.status).toBe(expected.status);
        if (expected.value !== undefined) expect(res.body.secret.secretValue).toBe(expected.value);
        if (expected.message !== undefined) expect(res.body.message).toBe(expected.message);
      });
    }
  });
});
