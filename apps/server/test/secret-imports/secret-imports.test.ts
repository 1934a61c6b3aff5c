import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createFolder, insertCustomRole } from "../helpers/structure";
import { createIdentity, createProject, createTenant, expectOk, type Tenant } from "../helpers/tenant";

/** A project with source folders staging:/s1.. and imports of the first `count` into dev:/. */
const setup = async (count = 0, sources = 3) => {
  const tenant = await createTenant();
  const project = await createProject(tenant);
  for (let i = 1; i <= sources; i += 1) await createFolder(tenant, project.id, "staging", "/", `s${i}`);
  const ids: string[] = [];
  for (let i = 1; i <= count; i += 1) ids.push(await addImport(tenant, project.id, "dev", "/", "staging", `/s${i}`));
  return { tenant, project, ids };
};

const addImport = async (
  tenant: Tenant,
  projectId: string,
  environment: string,
  path: string,
  fromEnv: string,
  fromPath: string,
) =>
  expectOk(
    await tenant.admin.secretImports.create({
      body: { workspaceId: projectId, environment, path, import: { environment: fromEnv, path: fromPath } },
    }),
  ).secretImport.id;

const positions = async (tenant: Tenant, projectId: string, environment = "dev", path = "/") =>
  expectOk(
    await tenant.admin.secretImports.list({ query: { workspaceId: projectId, environment, path } }),
  ).secretImports.map((i) => ({
    id: i.id,
    position: i.position,
  }));

describe("POST /api/v1/secret-imports", () => {
  it("appends imports at the next position, returning importEnv", async () => {
    const { tenant, project } = await setup();
    const res = await tenant.admin.secretImports.create({
      body: {
        workspaceId: project.id,
        environment: "dev",
        path: "/",
        import: { environment: "staging", path: "/s1/" },
      },
    });
    expect(res.status).toBe(200);
    const staging = project.environments.find((e) => e.slug === "staging")!;
    expect(expectOk(res)).toMatchObject({
      message: "Successfully created secret import",
      secretImport: {
        importPath: "/s1",
        position: 1,
        version: 1,
        isReplication: false,
        isReserved: false,
        isReplicationSuccess: null,
        replicationStatus: null,
        lastReplicated: null,
        importEnv: { id: staging.id, slug: "staging", name: "Staging" },
      },
    });
    const second = await tenant.admin.secretImports.create({
      body: { projectId: project.id, environment: "dev", import: { environment: "staging", path: "/s2" } },
    });
    expect(expectOk(second).secretImport.position).toBe(2);
  });

  it("refuses direct, transitive and self cycles and duplicates (400)", async () => {
    const { tenant, project } = await setup();
    await createFolder(tenant, project.id, "dev", "/", "a");
    await createFolder(tenant, project.id, "prod", "/", "c");
    // dev:/a <- staging:/s1 <- prod:/c
    await addImport(tenant, project.id, "dev", "/a", "staging", "/s1");
    await addImport(tenant, project.id, "staging", "/s1", "prod", "/c");
    const create = (environment: string, path: string, fromEnv: string, fromPath: string) =>
      tenant.admin.secretImports.create({
        body: { workspaceId: project.id, environment, path, import: { environment: fromEnv, path: fromPath } },
      });
    for (const res of [
      await create("staging", "/s1", "dev", "/a"),
      await create("prod", "/c", "dev", "/a"),
      await create("dev", "/a", "dev", "/a"),
    ]) {
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ statusCode: 400, message: "Cyclic import not allowed" });
    }
    const duplicate = await create("dev", "/a", "staging", "/s1");
    expect(duplicate.status).toBe(400);
    expect(duplicate.body).toMatchObject({
      message: "Secret import of path '/s1' in environment with slug 'staging' already exists",
    });
    expect((await create("dev", "/a", "prod", "/c")).status).toBe(200);
  });

  it("needs the holding folder, the source environment and the source folder (404)", async () => {
    const { tenant, project } = await setup();
    const create = (path: string, fromEnv: string, fromPath: string) =>
      tenant.admin.secretImports.create({
        body: { workspaceId: project.id, environment: "dev", path, import: { environment: fromEnv, path: fromPath } },
      });
    const folder = await create("/missing", "staging", "/s1");
    expect(folder.status).toBe(404);
    expect(folder.body).toMatchObject({
      message: "Folder with path '/missing' in environment with slug 'dev' not found",
    });
    const env = await create("/", "qa", "/s1");
    expect(env.status).toBe(404);
    expect(env.body).toMatchObject({ message: "The requested entity is not found" });
    const source = await create("/", "staging", "/nothing");
    expect(source.status).toBe(404);
    expect(source.body).toMatchObject({
      message: "Folder with path '/nothing' in environment with slug 'staging' not found",
    });
    const other = await createTenant();
    const res = await other.admin.secretImports.create({
      body: { workspaceId: project.id, environment: "dev", import: { environment: "staging", path: "/s1" } },
    });
    expect(res.status).toBe(404);
  });

  it("checks create on secret-imports at the holder and read on the source's secrets (403)", async () => {
    const { tenant, project } = await setup();
    const body = {
      workspaceId: project.id,
      environment: "dev",
      path: "/",
      import: { environment: "staging", path: "/s1" },
    };
    const none = await createIdentity(tenant, { projectId: project.id, projectRole: "no-access" });
    const denied = await none.client.secretImports.create({ body });
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({
      error: "PermissionDenied",
      message: "You are not allowed to create on secret-imports",
    });
    const role = await insertCustomRole(tenant, project.id, [
      {
        subject: "secret-imports",
        action: ["create", "read"],
        inverted: false,
        conditions: { environment: "dev", secretPath: { $glob: "/**" } },
      },
      {
        subject: "secrets",
        action: ["describeSecret"],
        inverted: false,
        conditions: { environment: "staging", secretPath: "/s1" },
      },
    ]);
    const scoped = await createIdentity(tenant, { projectId: project.id, projectRole: role });
    expect((await scoped.client.secretImports.create({ body })).status).toBe(200);
    const unreadable = await scoped.client.secretImports.create({
      body: { ...body, import: { environment: "staging", path: "/s2" } },
    });
    expect(unreadable.status).toBe(403);
    expect(unreadable.body).toMatchObject({ message: "You are not allowed to describeSecret on secrets" });
    const elsewhere = await scoped.client.secretImports.create({ body: { ...body, environment: "prod" } });
    expect(elsewhere.status).toBe(403);
  });

  it("answers 401 without a token, 422 on bad input and 400 for non secret-manager projects", async () => {
    const { tenant, project } = await setup();
    const body = {
      workspaceId: project.id,
      environment: "dev",
      path: "/",
      import: { environment: "staging", path: "/s1" },
    };
    expect((await tenant.anonymous.secretImports.create({ body })).status).toBe(401);
    expect(
      (await tenant.admin.secretImports.create({ body: { ...body, import: { environment: "staging" } } as never }))
        .status,
    ).toBe(422);
    expect((await tenant.admin.secretImports.create({ body: { ...body, workspaceId: undefined } })).status).toBe(422);
    expect(
      (
        await tenant.admin.secretImports.create({
          body: { ...body, import: { environment: "staging", path: "/../x" } },
        })
      ).status,
    ).toBe(422);
    const pki = await createProject(tenant, "cert-manager");
    expect((await tenant.admin.secretImports.create({ body: { ...body, workspaceId: pki.id } })).status).toBe(400);
  });
});

describe("GET /api/v1/secret-imports", () => {
  it("lists a folder's imports by position, with read on secret-imports", async () => {
    const { tenant, project, ids } = await setup(3);
    const res = await tenant.admin.secretImports.list({
      query: { workspaceId: project.id, environment: "dev", path: "/" },
    });
    expect(res.status).toBe(200);
    const body = expectOk(res);
    expect(body.message).toBe("Successfully fetched secret imports");
    expect(body.secretImports.map((i) => [i.id, i.position, i.importPath])).toEqual([
      [ids[0], 1, "/s1"],
      [ids[1], 2, "/s2"],
      [ids[2], 3, "/s3"],
    ]);
    const viewer = await createIdentity(tenant, { projectId: project.id, projectRole: "viewer" });
    expect(
      (await viewer.client.secretImports.list({ query: { workspaceId: project.id, environment: "dev" } })).status,
    ).toBe(200);
    const none = await createIdentity(tenant, { projectId: project.id, projectRole: "no-access" });
    const denied = await none.client.secretImports.list({ query: { workspaceId: project.id, environment: "dev" } });
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ message: "You are not allowed to read on secret-imports" });
    expect(
      (await tenant.anonymous.secretImports.list({ query: { workspaceId: project.id, environment: "dev" } })).status,
    ).toBe(401);
    expect((await tenant.admin.secretImports.list({ query: { environment: "dev" } })).status).toBe(422);
    expect(
      (await tenant.admin.secretImports.list({ query: { workspaceId: project.id, environment: "dev", path: "/x" } }))
        .status,
    ).toBe(404);
  });
});

describe("PATCH /api/v2/secret-imports/:secretImportId", () => {
  it("moves an import, shifting the ones between, and clamps positions beyond the end", async () => {
    const { tenant, project, ids } = await setup(3);
    const move = (id: string, position: number) =>
      tenant.admin.secretImports.update({
        params: { secretImportId: id },
        body: { projectId: project.id, environment: "dev", import: { position } },
      });
    const res = await move(ids[0]!, 3);
    expect(res.status).toBe(200);
    expect(expectOk(res)).toMatchObject({
      message: "Successfully updated secret import",
      secretImport: { id: ids[0], position: 3 },
    });
    expect(await positions(tenant, project.id)).toEqual([
      { id: ids[1], position: 1 },
      { id: ids[2], position: 2 },
      { id: ids[0], position: 3 },
    ]);
    expect(expectOk(await move(ids[0]!, 1)).secretImport.position).toBe(1);
    expect(expectOk(await move(ids[1]!, 99)).secretImport.position).toBe(3);
    expect(expectOk(await move(ids[2]!, 0)).secretImport.position).toBe(2);
    expect((await positions(tenant, project.id)).map((p) => p.id)).toEqual([ids[0], ids[2], ids[1]]);
  });

  it("changes the source, bumping the version, and refuses a change that closes a cycle (400)", async () => {
    const { tenant, project, ids } = await setup(1);
    await addImport(tenant, project.id, "staging", "/s2", "dev", "/");
    const update = (body: { environment?: string; path?: string }) =>
      tenant.admin.secretImports.update({
        params: { secretImportId: ids[0]! },
        body: { projectId: project.id, environment: "dev", path: "/", import: body },
      });
    const changed = expectOk(await update({ path: "/s3" })).secretImport;
    expect(changed).toMatchObject({ importPath: "/s3", version: 2, importEnv: { slug: "staging" } });
    const cycle = await update({ path: "/s2" });
    expect(cycle.status).toBe(400);
    expect(cycle.body).toMatchObject({ message: "Cyclic import not allowed" });
    const env = await update({ environment: "qa" });
    expect(env.status).toBe(404);
    const folder = await update({ environment: "prod", path: "/s1" });
    expect(folder.status).toBe(404);
    expect(folder.body).toMatchObject({ message: "Folder with path '/s1' in environment with slug 'prod' not found" });
  });

  it("answers 400 'Secret import not found' for an import outside the folder, 404 for the folder, 403, 401, 422", async () => {
    const { tenant, project, ids } = await setup(1);
    await createFolder(tenant, project.id, "dev", "/", "other");
    const body = { projectId: project.id, environment: "dev", path: "/other", import: { position: 1 } };
    for (const secretImportId of [ids[0]!, randomUUID(), "not-a-uuid"]) {
      const res = await tenant.admin.secretImports.update({ params: { secretImportId }, body });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ message: "Secret import not found" });
    }
    const noFolder = await tenant.admin.secretImports.update({
      params: { secretImportId: ids[0]! },
      body: { ...body, path: "/nope" },
    });
    expect(noFolder.status).toBe(404);
    const viewer = await createIdentity(tenant, { projectId: project.id, projectRole: "viewer" });
    const denied = await viewer.client.secretImports.update({
      params: { secretImportId: ids[0]! },
      body: { ...body, path: "/" },
    });
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ message: "You are not allowed to edit on secret-imports" });
    expect((await tenant.anonymous.secretImports.update({ params: { secretImportId: ids[0]! }, body })).status).toBe(
      401,
    );
    expect(
      (
        await tenant.admin.secretImports.update({
          params: { secretImportId: ids[0]! },
          body: { ...body, import: { position: -1 } },
        })
      ).status,
    ).toBe(422);
  });
});

describe("DELETE /api/v1/secret-imports/:secretImportId", () => {
  it("deletes an import and closes the gap", async () => {
    const { tenant, project, ids } = await setup(3);
    const res = await tenant.admin.secretImports.delete({
      params: { secretImportId: ids[0]! },
      body: { workspaceId: project.id, environment: "dev", path: "/" },
    });
    expect(res.status).toBe(200);
    expect(expectOk(res)).toMatchObject({
      message: "Successfully deleted secret import",
      secretImport: { id: ids[0], position: 1, importEnv: { slug: "staging" } },
    });
    expect(await positions(tenant, project.id)).toEqual([
      { id: ids[1], position: 1 },
      { id: ids[2], position: 2 },
    ]);
  });

  it("answers 404 for imports outside the folder and missing folders, 403, 401 and 422", async () => {
    const { tenant, project, ids } = await setup(1);
    const body = { workspaceId: project.id, environment: "dev", path: "/" };
    for (const secretImportId of [randomUUID(), "nope"]) {
      const res = await tenant.admin.secretImports.delete({ params: { secretImportId }, body });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ message: `Secret import with folder ID '${secretImportId}' not found` });
    }
    expect(
      (await tenant.admin.secretImports.delete({ params: { secretImportId: ids[0]! }, body: { ...body, path: "/x" } }))
        .status,
    ).toBe(404);
    const member = await createIdentity(tenant, { projectId: project.id, projectRole: "viewer" });
    const denied = await member.client.secretImports.delete({ params: { secretImportId: ids[0]! }, body });
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ message: "You are not allowed to delete on secret-imports" });
    expect((await tenant.anonymous.secretImports.delete({ params: { secretImportId: ids[0]! }, body })).status).toBe(
      401,
    );
    expect(
      (
        await tenant.admin.secretImports.delete({
          params: { secretImportId: ids[0]! },
          body: { environment: "dev" } as never,
        })
      ).status,
    ).toBe(422);
    const other = await createTenant();
    expect((await other.admin.secretImports.delete({ params: { secretImportId: ids[0]! }, body })).status).toBe(404);
  });
});
