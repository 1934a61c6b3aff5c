import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createFolder, insertCustomRole } from "../helpers/structure";
import { createIdentity, createProject, createTenant, expectOk } from "../helpers/tenant";

describe("POST /api/v1/folders", () => {
  it("creates a folder and its missing parents, and returns an existing one unchanged", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const res = await tenant.admin.folders.create({
      body: { projectId: project.id, environment: "dev", path: "/apps/web", name: "config", description: "web config" },
    });
    expect(res.status).toBe(200);
    const folder = expectOk(res).folder;
    expect(folder).toMatchObject({
      name: "config",
      description: "web config",
      version: 1,
      isReserved: false,
      lastSecretModified: null,
    });
    const byId = expectOk(await tenant.admin.folders.get({ params: { id: folder.id } })).folder;
    expect(byId.path).toBe("/apps/web/config");
    const again = expectOk(
      await tenant.admin.folders.create({
        body: { workspaceId: project.id, environment: "dev", path: "/apps/web/", name: "config" },
      }),
    );
    expect(again.folder.id).toBe(folder.id);
    const parents = expectOk(
      await tenant.admin.folders.list({ query: { workspaceId: project.id, environment: "dev", path: "/apps" } }),
    );
    expect(parents.folders.map((f) => f.name)).toEqual(["web"]);
  });

  it("validates names, paths and the project reference (422) after authentication (401)", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const body = { workspaceId: project.id, environment: "dev", path: "/", name: "ok" };
    expect((await tenant.anonymous.folders.create({ body: { ...body, name: "a/b" } })).status).toBe(401);
    for (const bad of [
      { ...body, name: "a/b" },
      { ...body, name: ".." },
      { ...body, name: "" },
      { ...body, name: "x".repeat(65) },
      { ...body, path: "/a/../b" },
      { ...body, path: "/a b" },
      { environment: "dev", path: "/", name: "ok" },
    ]) {
      const res = await tenant.admin.folders.create({ body: bad });
      expect(res.status, JSON.stringify(bad)).toBe(422);
    }
    const invalid = await tenant.admin.folders.create({ body: { ...body, name: "a b" } });
    expect(invalid.body).toMatchObject({
      error: "ValidationFailure",
      message: [
        expect.objectContaining({
          message: "Invalid folder name. Only alphanumeric characters, dashes, and underscores are allowed.",
        }),
      ],
    });
  });

  it("answers 404 for a missing environment or project and for another organization's project", async () => {
    const tenant = await createTenant();
    const other = await createTenant();
    const project = await createProject(tenant);
    const foreign = await createProject(other);
    const env = await tenant.admin.folders.create({
      body: { workspaceId: project.id, environment: "nope", path: "/", name: "a" },
    });
    expect(env.status).toBe(404);
    expect(env.body).toMatchObject({
      message: `Environment with slug 'nope' in project with ID '${project.id}' not found`,
    });
    for (const workspaceId of ["not-a-uuid", randomUUID(), foreign.id]) {
      const res = await tenant.admin.folders.create({
        body: { workspaceId, environment: "dev", path: "/", name: "a" },
      });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ message: `Project with ${workspaceId} not found` });
    }
  });

  it("refuses projects that are not secret managers (400)", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant, "cert-manager");
    const res = await tenant.admin.folders.create({
      body: { workspaceId: project.id, environment: "dev", path: "/", name: "a" },
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      message: "The project is of type cert-manager. Operations of type secret-manager are not allowed.",
    });
  });

  it("needs create on secret-folders for the environment and path, honouring $glob conditions (403)", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const none = await createIdentity(tenant, { projectId: project.id, projectRole: "no-access" });
    const denied = await none.client.folders.create({
      body: { workspaceId: project.id, environment: "dev", path: "/", name: "a" },
    });
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({
      error: "PermissionDenied",
      message: "You are not allowed to create on secret-folders",
    });
    const outsider = await createIdentity(tenant);
    const notMember = await outsider.client.folders.create({
      body: { workspaceId: project.id, environment: "dev", path: "/", name: "a" },
    });
    expect(notMember.status).toBe(403);
    expect(notMember.body).toMatchObject({ error: "ProjectMembershipNotFound" });

    const role = await insertCustomRole(tenant, project.id, [
      {
        subject: "secret-folders",
        action: ["create", "edit", "delete"],
        inverted: false,
        conditions: { environment: "dev", secretPath: { $glob: "/apps/**" } },
      },
    ]);
    const scoped = await createIdentity(tenant, { projectId: project.id, projectRole: role });
    await createFolder(tenant, project.id, "dev", "/", "apps");
    const inside = await scoped.client.folders.create({
      body: { workspaceId: project.id, environment: "dev", path: "/apps", name: "api" },
    });
    expect(inside.status).toBe(200);
    const deeper = await scoped.client.folders.create({
      body: { workspaceId: project.id, environment: "dev", path: "/apps/api", name: "v1" },
    });
    expect(deeper.status).toBe(200);
    const wrongPath = await scoped.client.folders.create({
      body: { workspaceId: project.id, environment: "dev", path: "/", name: "other" },
    });
    expect(wrongPath.status).toBe(403);
    const wrongEnv = await scoped.client.folders.create({
      body: { workspaceId: project.id, environment: "prod", path: "/apps", name: "api" },
    });
    expect(wrongEnv.status).toBe(403);
  });
});

describe("GET /api/v1/folders", () => {
  it("lists the folders directly under a path, or every folder below it when recursive", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    await createFolder(tenant, project.id, "dev", "/b", "c");
    await createFolder(tenant, project.id, "dev", "/", "a");
    const top = expectOk(await tenant.admin.folders.list({ query: { workspaceId: project.id, environment: "dev" } }));
    expect(top.folders.map((f) => f.name)).toEqual(["a", "b"]);
    const all = expectOk(
      await tenant.admin.folders.list({
        query: { projectId: project.id, environment: "dev", path: "/", recursive: "true" },
      }),
    );
    expect(all.folders.map((f) => f.relativePath)).toEqual(["/a", "/b", "/b/c"]);
    const missing = expectOk(
      await tenant.admin.folders.list({
        query: { workspaceId: project.id, environment: "dev", path: "/nothing/here" },
      }),
    );
    expect(missing.folders).toEqual([]);
    const staging = expectOk(
      await tenant.admin.folders.list({ query: { workspaceId: project.id, environment: "staging" } }),
    );
    expect(staging.folders).toEqual([]);
  });

  it("lets any project member read (no-access included) and refuses outsiders", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    await createFolder(tenant, project.id, "dev", "/", "a");
    const none = await createIdentity(tenant, { projectId: project.id, projectRole: "no-access" });
    const res = await none.client.folders.list({ query: { workspaceId: project.id, environment: "dev" } });
    expect(res.status).toBe(200);
    const outsider = await createIdentity(tenant);
    expect(
      (await outsider.client.folders.list({ query: { workspaceId: project.id, environment: "dev" } })).status,
    ).toBe(403);
    expect(
      (await tenant.anonymous.folders.list({ query: { workspaceId: project.id, environment: "dev" } })).status,
    ).toBe(401);
    expect((await tenant.admin.folders.list({ query: { environment: "dev" } })).status).toBe(422);
    const env = await tenant.admin.folders.list({ query: { workspaceId: project.id, environment: "nope" } });
    expect(env.status).toBe(404);
    expect(env.body).toMatchObject({ message: "Environment with slug 'nope' not found" });
  });
});

describe("GET /api/v1/folders/:id", () => {
  it("returns the folder with its path, environment and project; the root is named root at /", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const folder = await createFolder(tenant, project.id, "staging", "/x", "y");
    const res = await tenant.admin.folders.get({ params: { id: folder.id } });
    expect(res.status).toBe(200);
    const body = expectOk(res).folder;
    const env = project.environments.find((e) => e.slug === "staging")!;
    expect(body).toMatchObject({
      id: folder.id,
      name: "y",
      path: "/x/y",
      projectId: project.id,
      envId: env.id,
      environment: { envId: env.id, envName: "Staging", envSlug: "staging" },
      version: 1,
      isReserved: false,
      description: null,
      lastSecretModified: null,
    });
    const parent = expectOk(await tenant.admin.folders.get({ params: { id: body.parentId! } })).folder;
    expect(parent).toMatchObject({ name: "x", path: "/x" });
    const root = expectOk(await tenant.admin.folders.get({ params: { id: parent.parentId! } })).folder;
    expect(root).toMatchObject({ name: "root", path: "/", parentId: null });
  });

  it("answers 404 for unknown, non-UUID and other organizations' folders, 403 for outsiders, 401 without a token", async () => {
    const tenant = await createTenant();
    const other = await createTenant();
    const foreignProject = await createProject(other);
    const foreign = await createFolder(other, foreignProject.id, "dev", "/", "secret");
    for (const id of ["nope", randomUUID(), foreign.id]) {
      const res = await tenant.admin.folders.get({ params: { id } });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ message: `Folder with ID '${id}' not found` });
    }
    const project = await createProject(tenant);
    const folder = await createFolder(tenant, project.id, "dev", "/", "a");
    const outsider = await createIdentity(tenant);
    const denied = await outsider.client.folders.get({ params: { id: folder.id } });
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ error: "ProjectMembershipNotFound" });
    const viewer = await createIdentity(tenant, { projectId: project.id, projectRole: "no-access" });
    expect((await viewer.client.folders.get({ params: { id: folder.id } })).status).toBe(200);
    expect((await tenant.anonymous.folders.get({ params: { id: folder.id } })).status).toBe(401);
  });
});

describe("PATCH /api/v1/folders/:folderId", () => {
  it("renames a folder (by id or by name), bumping its version", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const folder = await createFolder(tenant, project.id, "dev", "/a", "b");
    const res = await tenant.admin.folders.update({
      params: { folderId: folder.id },
      body: { workspaceId: project.id, environment: "dev", path: "/a", name: "c", description: "renamed" },
    });
    expect(res.status).toBe(200);
    expect(expectOk(res).folder).toMatchObject({ id: folder.id, name: "c", description: "renamed", version: 2 });
    const byName = expectOk(
      await tenant.admin.folders.update({
        params: { folderId: "c" },
        body: { projectId: project.id, environment: "dev", path: "/a", name: "d" },
      }),
    );
    expect(byName.folder).toMatchObject({ id: folder.id, name: "d", version: 3, description: "renamed" });
    expect(expectOk(await tenant.admin.folders.get({ params: { id: folder.id } })).folder.path).toBe("/a/d");
  });

  it("refuses a name taken under the same parent (400) and unknown folders or paths (404)", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const a = await createFolder(tenant, project.id, "dev", "/", "a");
    await createFolder(tenant, project.id, "dev", "/", "b");
    const body = { workspaceId: project.id, environment: "dev", path: "/", name: "b" };
    const taken = await tenant.admin.folders.update({ params: { folderId: a.id }, body });
    expect(taken.status).toBe(400);
    expect(taken.body).toMatchObject({ message: "Folder with specified name already exists" });
    const missing = await tenant.admin.folders.update({
      params: { folderId: randomUUID() },
      body: { ...body, name: "z" },
    });
    expect(missing.status).toBe(404);
    const wrongParent = await tenant.admin.folders.update({
      params: { folderId: a.id },
      body: { ...body, path: "/b", name: "z" },
    });
    expect(wrongParent.status).toBe(404);
    expect(wrongParent.body).toMatchObject({ message: `Folder with ID '${a.id}' not found` });
    const noPath = await tenant.admin.folders.update({
      params: { folderId: a.id },
      body: { ...body, path: "/zz", name: "z" },
    });
    expect(noPath.status).toBe(404);
    expect(noPath.body).toMatchObject({ message: "Folder with path '/zz' in environment with slug 'dev' not found" });
  });

  it("needs edit on secret-folders (403), a token (401) and a valid name (422)", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const a = await createFolder(tenant, project.id, "dev", "/", "a");
    const body = { workspaceId: project.id, environment: "dev", path: "/", name: "b" };
    const viewer = await createIdentity(tenant, { projectId: project.id, projectRole: "viewer" });
    const denied = await viewer.client.folders.update({ params: { folderId: a.id }, body });
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ message: "You are not allowed to edit on secret-folders" });
    expect((await tenant.anonymous.folders.update({ params: { folderId: a.id }, body })).status).toBe(401);
    expect(
      (await tenant.admin.folders.update({ params: { folderId: a.id }, body: { ...body, name: "x.y" } })).status,
    ).toBe(422);
  });
});

describe("DELETE /api/v1/folders/:folderIdOrName", () => {
  it("deletes the folder with its subtree and the imports they hold", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const a = await createFolder(tenant, project.id, "dev", "/", "a");
    const child = await createFolder(tenant, project.id, "dev", "/a", "b");
    await createFolder(tenant, project.id, "staging", "/", "src");
    expectOk(
      await tenant.admin.secretImports.create({
        body: {
          workspaceId: project.id,
          environment: "dev",
          path: "/a/b",
          import: { environment: "staging", path: "/src" },
        },
      }),
    );
    const res = await tenant.admin.folders.delete({
      params: { folderIdOrName: a.id },
      body: { workspaceId: project.id, environment: "dev", path: "/" },
    });
    expect(res.status).toBe(200);
    expect(expectOk(res).folder).toMatchObject({ id: a.id, name: "a" });
    expect((await tenant.admin.folders.get({ params: { id: child.id } })).status).toBe(404);
    const imports = await tenant.app.deps.db
      .selectFrom("secret_imports")
      .select("id")
      .where("folder_id", "=", child.id)
      .execute();
    expect(imports).toEqual([]);
    await createFolder(tenant, project.id, "dev", "/", "byname");
    const byName = await tenant.admin.folders.delete({
      params: { folderIdOrName: "byname" },
      body: { projectId: project.id, environment: "dev" },
    });
    expect(expectOk(byName).folder.name).toBe("byname");
  });

  it("answers 404 for unknown folders, paths and environments, 403 without delete, 401 and 422", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const a = await createFolder(tenant, project.id, "dev", "/", "a");
    const body = { workspaceId: project.id, environment: "dev", path: "/" };
    const missing = await tenant.admin.folders.delete({ params: { folderIdOrName: "nope" }, body });
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ message: "Folder with ID 'nope' not found" });
    expect(
      (await tenant.admin.folders.delete({ params: { folderIdOrName: a.id }, body: { ...body, path: "/x" } })).status,
    ).toBe(404);
    const env = await tenant.admin.folders.delete({
      params: { folderIdOrName: a.id },
      body: { ...body, environment: "qa" },
    });
    expect(env.status).toBe(404);
    expect(env.body).toMatchObject({ message: "Environment with slug 'qa' not found" });
    const viewer = await createIdentity(tenant, { projectId: project.id, projectRole: "viewer" });
    const denied = await viewer.client.folders.delete({ params: { folderIdOrName: a.id }, body });
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ message: "You are not allowed to delete on secret-folders" });
    expect((await tenant.anonymous.folders.delete({ params: { folderIdOrName: a.id }, body })).status).toBe(401);
    expect(
      (await tenant.admin.folders.delete({ params: { folderIdOrName: a.id }, body: { environment: "dev" } })).status,
    ).toBe(422);
    // The root folder has no parent, so it is never a deletable child.
    expect((await tenant.admin.folders.delete({ params: { folderIdOrName: "root" }, body })).status).toBe(404);
  });
});
