import type { MutatingOperation } from "../../../src/modules/audit/audit-events";
import { createProject, uniqueName, type Tenant } from "../../helpers/tenant";
import { ok, written, type Step } from "./runner";

type SecretOperation = Extract<
  MutatingOperation,
  | `folders.${string}`
  | `secretImports.${string}`
  | `secretsV3.${string}`
  | `secretsV4.${string}`
  | `secretTags.${string}`
  | `secretVersions.${string}`
  | `secretsMove.${string}`
  | `pit.${string}`
  | `secretSnapshots.${string}`
>;

/** A value the no-secret scan must never find in an event. */
const secretValue = () => uniqueName("secret-value");

const projectWithSecret = async (tenant: Tenant) => {
  const project = await createProject(tenant);
  const key = uniqueName("KEY").toUpperCase().replace(/-/g, "_");
  const { secret } = written(
    await tenant.admin.secretsV4.create({
      params: { secretName: key },
      body: { projectId: project.id, environment: "dev", secretValue: secretValue() },
    }),
  );
  return { project, key, secret };
};

const secretKey = () => uniqueName("KEY").toUpperCase().replace(/-/g, "_");

const folder = async (tenant: Tenant) => {
  const project = await createProject(tenant);
  const name = uniqueName("folder");
  const created = ok(
    await tenant.admin.folders.create({ body: { workspaceId: project.id, environment: "dev", path: "/", name } }),
  ).folder;
  return { project, folder: created };
};

const secretImport = async (tenant: Tenant) => {
  const project = await createProject(tenant);
  const { secretImport: created } = ok(
    await tenant.admin.secretImports.create({
      body: { workspaceId: project.id, environment: "dev", path: "/", import: { environment: "staging", path: "/" } },
    }),
  );
  return { project, secretImport: created };
};

const tag = async (tenant: Tenant) => {
  const project = await createProject(tenant);
  const { tag: created } = ok(
    await tenant.admin.secretTags.projects.create({
      params: { projectId: project.id },
      body: { slug: uniqueName("tag"), color: "" },
    }),
  );
  return { project, tag: created };
};

const secretSteps = (version: "secretsV3" | "secretsV4"): Record<string, Step> => {
  const scope = (projectId: string) =>
    version === "secretsV3" ? { workspaceId: projectId, environment: "dev" } : { projectId, environment: "dev" };
  return {
    create: async ({ tenant, act }) => {
      const project = await createProject(tenant);
      const key = secretKey();
      const { secret } = written(
        await act(() =>
          tenant.admin[version].create({
            params: { secretName: key },
            body: { ...scope(project.id), secretValue: secretValue() } as never,
          }),
        ),
      );
      return {
        projectId: project.id,
        metadata: { secretKey: key, environment: "dev", secretPath: "/", secretId: secret.id, secretVersion: 1 },
      };
    },
    update: async ({ tenant, act }) => {
      const { project, key, secret } = await projectWithSecret(tenant);
      ok(
        await act(() =>
          tenant.admin[version].update({
            params: { secretName: key },
            body: { ...scope(project.id), secretValue: secretValue() } as never,
          }),
        ),
      );
      return {
        projectId: project.id,
        metadata: { secretKey: key, environment: "dev", secretId: secret.id, secretVersion: 2 },
      };
    },
    delete: async ({ tenant, act }) => {
      const { project, key, secret } = await projectWithSecret(tenant);
      ok(
        await act(() =>
          tenant.admin[version].delete({ params: { secretName: key }, body: scope(project.id) as never }),
        ),
      );
      return { projectId: project.id, metadata: { secretKey: key, environment: "dev", secretId: secret.id } };
    },
    batchCreate: async ({ tenant, act }) => {
      const project = await createProject(tenant);
      const keys = [secretKey(), secretKey()];
      const { secrets } = ok(
        await act(() =>
          tenant.admin[version].batchCreate({
            body: {
              ...scope(project.id),
              secrets: keys.map((k) => ({ secretKey: k, secretValue: secretValue() })),
            } as never,
          }),
        ),
      ) as { secrets: { id: string; secretKey: string }[] };
      const written = keys.map((k) => ({
        secretId: secrets.find((s) => s.secretKey === k)!.id,
        secretKey: k,
        secretVersion: 1,
      }));
      return { projectId: project.id, metadata: { secretKeys: keys, secrets: written, environment: "dev" } };
    },
    batchUpdate: async ({ tenant, act }) => {
      const { project, key, secret } = await projectWithSecret(tenant);
      ok(
        await act(() =>
          tenant.admin[version].batchUpdate({
            body: { ...scope(project.id), secrets: [{ secretKey: key, secretValue: secretValue() }] } as never,
          }),
        ),
      );
      const secrets = [{ secretId: secret.id, secretKey: key, secretVersion: 2 }];
      return { projectId: project.id, metadata: { secretKeys: [key], secrets, environment: "dev" } };
    },
    batchDelete: async ({ tenant, act }) => {
      const { project, key, secret } = await projectWithSecret(tenant);
      ok(
        await act(() =>
          tenant.admin[version].batchDelete({ body: { ...scope(project.id), secrets: [{ secretKey: key }] } as never }),
        ),
      );
      const secrets = [{ secretId: secret.id, secretKey: key, secretVersion: 1 }];
      return { projectId: project.id, metadata: { secretKeys: [key], secrets, environment: "dev" } };
    },
  };
};

const prefixed = <P extends string>(prefix: P, steps: Record<string, Step>) =>
  Object.fromEntries(Object.entries(steps).map(([key, step]) => [`${prefix}.${key}`, step])) as Record<
    Extract<SecretOperation, `${P}.${string}`>,
    Step
  >;

const tagSteps = (via: "projects" | "workspace"): Record<string, Step> => ({
  create: async ({ tenant, act }) => {
    const project = await createProject(tenant);
    const slug = uniqueName("tag");
    const { tag: created } = ok(
      await act(() =>
        tenant.admin.secretTags[via].create({ params: { projectId: project.id }, body: { slug, color: "" } }),
      ),
    );
    return { projectId: project.id, metadata: { tagId: created.id, slug } };
  },
  update: async ({ tenant, act }) => {
    const { project, tag: created } = await tag(tenant);
    const slug = uniqueName("renamed");
    ok(
      await act(() =>
        tenant.admin.secretTags[via].update({ params: { projectId: project.id, tagId: created.id }, body: { slug } }),
      ),
    );
    return { projectId: project.id, metadata: { tagId: created.id, slug } };
  },
  delete: async ({ tenant, act }) => {
    const { project, tag: created } = await tag(tenant);
    ok(await act(() => tenant.admin.secretTags[via].delete({ params: { projectId: project.id, tagId: created.id } })));
    return { projectId: project.id, metadata: { tagId: created.id, slug: created.slug } };
  },
});

export const SECRET_STEPS: Record<SecretOperation, Step> = {
  "folders.create": async ({ tenant, act }) => {
    const project = await createProject(tenant);
    const name = uniqueName("folder");
    const created = ok(
      await act(() =>
        tenant.admin.folders.create({ body: { workspaceId: project.id, environment: "dev", path: "/", name } }),
      ),
    ).folder;
    return { projectId: project.id, metadata: { folderId: created.id, name, environment: "dev", path: "/" } };
  },
  "folders.update": async ({ tenant, act }) => {
    const { project, folder: created } = await folder(tenant);
    ok(
      await act(() =>
        tenant.admin.folders.update({
          params: { folderId: created.id },
          body: { workspaceId: project.id, environment: "dev", path: "/", name: "renamed" },
        }),
      ),
    );
    return { projectId: project.id, metadata: { folderId: created.id, name: "renamed", environment: "dev" } };
  },
  "folders.delete": async ({ tenant, act }) => {
    const { project, folder: created } = await folder(tenant);
    ok(
      await act(() =>
        tenant.admin.folders.delete({
          params: { folderIdOrName: created.id },
          body: { workspaceId: project.id, environment: "dev", path: "/" },
        }),
      ),
    );
    return { projectId: project.id, metadata: { folderIdOrName: created.id, environment: "dev" } };
  },
  "secretImports.create": async ({ tenant, act }) => {
    const project = await createProject(tenant);
    const { secretImport: created } = ok(
      await act(() =>
        tenant.admin.secretImports.create({
          body: {
            workspaceId: project.id,
            environment: "dev",
            path: "/",
            import: { environment: "staging", path: "/" },
          },
        }),
      ),
    );
    return { projectId: project.id, metadata: { secretImportId: created.id, environment: "dev" } };
  },
  "secretImports.update": async ({ tenant, act }) => {
    const { project, secretImport: created } = await secretImport(tenant);
    ok(
      await act(() =>
        tenant.admin.secretImports.update({
          params: { secretImportId: created.id },
          body: { projectId: project.id, environment: "dev", import: { path: "/" } },
        }),
      ),
    );
    return { projectId: project.id, metadata: { secretImportId: created.id, environment: "dev" } };
  },
  "secretImports.delete": async ({ tenant, act }) => {
    const { project, secretImport: created } = await secretImport(tenant);
    ok(
      await act(() =>
        tenant.admin.secretImports.delete({
          params: { secretImportId: created.id },
          body: { workspaceId: project.id, environment: "dev", path: "/" },
        }),
      ),
    );
    return { projectId: project.id, metadata: { secretImportId: created.id, environment: "dev" } };
  },
  ...prefixed("secretsV3", secretSteps("secretsV3")),
  ...prefixed("secretsV4", secretSteps("secretsV4")),
  ...prefixed("secretTags.projects", tagSteps("projects")),
  ...prefixed("secretTags.workspace", tagSteps("workspace")),
  "secretsMove.move": async ({ tenant, act }) => {
    const { project, key, secret } = await projectWithSecret(tenant);
    ok(
      await act(() =>
        tenant.admin.secretsMove.move({
          body: {
            projectId: project.id,
            sourceEnvironment: "dev",
            sourceSecretPath: "/",
            destinationEnvironment: "staging",
            destinationSecretPath: "/",
            secretIds: [secret.id],
          },
        }),
      ),
    );
    return {
      projectId: project.id,
      metadata: { secretKeys: [key], sourceEnvironment: "dev", destinationEnvironment: "staging" },
    };
  },
  "secretVersions.rollback": async ({ tenant, act }) => {
    const { project, key, secret } = await projectWithSecret(tenant);
    ok(
      await tenant.admin.secretsV4.update({
        params: { secretName: key },
        body: { projectId: project.id, environment: "dev", secretValue: secretValue() },
      }),
    );
    ok(
      await act(() => tenant.admin.secretVersions.rollback({ params: { secretId: secret.id, version: 1 }, body: {} })),
    );
    return { projectId: project.id, metadata: { secretId: secret.id, version: "1", secretKey: key, secretVersion: 3 } };
  },
  "pit.rollback": async ({ tenant, act }) => {
    const { project, commits } = await changedTwice(tenant);
    const target = commits[1]!;
    ok(
      await act(() =>
        tenant.admin.pit.rollback({
          params: { commitId: target.id },
          body: { projectId: project.id, environment: "dev", folderId: target.folderId, deepRollback: false },
        }),
      ),
    );
    return {
      projectId: project.id,
      metadata: { targetCommitId: target.id, environment: "dev", deepRollback: false, totalChanges: 1 },
    };
  },
  "secretSnapshots.rollback": async ({ tenant, act }) => {
    const { project, commits } = await changedTwice(tenant);
    const target = commits[1]!;
    ok(await act(() => tenant.admin.secretSnapshots.rollback({ params: { secretSnapshotId: target.id }, body: {} })));
    return {
      projectId: project.id,
      metadata: { targetCommitId: target.id, message: "Rollback to snapshot", totalChanges: 1 },
    };
  },
  "pit.batchCommit": async ({ tenant, act }) => {
    const { project, key } = await projectWithSecret(tenant);
    const done = ok(
      await act(() =>
        tenant.admin.pit.batchCommit({
          body: {
            projectId: project.id,
            environment: "dev",
            secretPath: "/",
            message: "Tidy up",
            changes: {
              secrets: { delete: [{ secretKey: key }] },
              folders: { create: [{ folderName: "tidy" }] },
            },
          },
        }),
      ),
    );
    return {
      projectId: project.id,
      metadata: {
        commitId: "commitId" in done ? done.commitId : undefined,
        environment: "dev",
        secretPath: "/",
        message: "Tidy up",
        secretKeys: [key],
        folderNames: ["tidy"],
      },
    };
  },
  "pit.revert": async ({ tenant, act }) => {
    const { project, commits } = await changedTwice(tenant);
    const latest = commits[0]!;
    ok(
      await act(() =>
        tenant.admin.pit.revert({ params: { commitId: latest.id }, query: {}, body: { projectId: project.id } }),
      ),
    );
    return { projectId: project.id, metadata: { commitId: latest.id, changesReverted: 1 } };
  },
};

/** A secret created then changed: the root folder's commits, newest first. */
const changedTwice = async (tenant: Tenant) => {
  const { project, key } = await projectWithSecret(tenant);
  ok(
    await tenant.admin.secretsV4.update({
      params: { secretName: key },
      body: { projectId: project.id, environment: "dev", secretValue: secretValue() },
    }),
  );
  const { commits } = ok(
    await tenant.admin.pit.list({ query: { projectId: project.id, environment: "dev", path: "/" } }),
  );
  return { project, commits };
};
