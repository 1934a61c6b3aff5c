import type { Command } from "commander";
import { call, type Api } from "./api";

export type ScopeOptions = {
  projectId: string;
  env: string;
  path: string[];
  recursive?: boolean;
  includeImports?: boolean;
  expand?: boolean;
};

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** The flags every secrets command shares. */
export const withScope = (command: Command, { multiPath = true } = {}) =>
  command
    .requiredOption("--project-id <id>", "project id")
    .requiredOption("--env <slug>", "environment slug")
    .option("--path <path>", multiPath ? "secret path; repeat for several (later wins)" : "secret path", collect)
    .option("--recursive", "include secrets of sub-folders")
    .option("--include-imports", "merge imported secrets (folder secrets win, later imports win over earlier)")
    .option("--expand", "expand ${REF} secret references");

export const pathsOf = (scope: ScopeOptions) => (scope.path && scope.path.length > 0 ? scope.path : ["/"]);

/** Key → value for the scope: imports merged under the folder's own secrets, as the Infisical CLI does. */
export const fetchSecretMap = async (api: Api, scope: ScopeOptions) => {
  const merged: Record<string, string> = {};
  for (const secretPath of pathsOf(scope)) {
    const { secrets, imports } = await call(api, (client) =>
      client.secretsV3.list({
        query: {
          workspaceId: scope.projectId,
          environment: scope.env,
          secretPath,
          recursive: scope.recursive ? "true" : "false",
          include_imports: scope.includeImports ? "true" : "false",
          expandSecretReferences: scope.expand ? "true" : "false",
        },
      }),
    );
    const fromPath: Record<string, string> = {};
    for (const imported of scope.includeImports ? imports : []) {
      for (const secret of imported.secrets) fromPath[secret.secretKey] = secret.secretValue;
    }
    for (const secret of secrets) {
      if (!(secret.secretKey in fromPath) || secret.secretPath === secretPath)
        fromPath[secret.secretKey] = secret.secretValue;
    }
    Object.assign(merged, fromPath);
  }
  return merged;
};
