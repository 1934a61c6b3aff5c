import type { Command } from "commander";
import { bodyOf, call, send, type Api } from "./api";
import { CliError } from "./config";

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

const normalised = (secretPath: string) => secretPath.split("/").filter((segment) => segment.length > 0);

/**
 * The server answers a list of an unknown environment or folder as an empty success, like an empty
 * folder; so, only when a list comes back empty, one folder listing of the parent tells them apart
 * (it is a 404 for an unknown environment). A missing place is an error, an empty folder a note.
 */
const checkEmptyPlace = async (api: Api, scope: ScopeOptions, secretPath: string) => {
  const segments = normalised(secretPath);
  const name = segments.pop();
  const parent = `/${segments.join("/")}`;
  const path = name === undefined ? parent : `${parent === "/" ? "" : parent}/${name}`;
  const response = await send(api, (client) =>
    client.folders.list({ query: { workspaceId: scope.projectId, environment: scope.env, path: parent } }),
  );
  if (response.status === 404)
    throw new CliError(`Environment '${scope.env}' does not exist in project ${scope.projectId}`);
  const { folders } = await bodyOf(response);
  if (name !== undefined && !folders.some((folder) => folder.name === name))
    throw new CliError(`Folder ${path} does not exist in environment '${scope.env}' of project ${scope.projectId}`);
  process.stderr.write(
    `keyward: no secrets in ${path}${scope.recursive ? " or below" : ""} (environment '${scope.env}' of project ${scope.projectId})\n`,
  );
};

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
    // A folder with imports exists, even when they bring nothing.
    if (secrets.length === 0 && imports.length === 0) await checkEmptyPlace(api, scope, secretPath);
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
