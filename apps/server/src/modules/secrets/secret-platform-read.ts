import type { AppDeps } from "../../context";
import { buildAbility } from "../../permissions";
import { resolveImports } from "./imports/resolve-imports";
import { createExpander, type Expander } from "./references/expand";
import { hasReference } from "./references/reference-syntax";
import { forgetPlaintext, type PlainSecret } from "./secret-crypto";
import { createSecretSource, listVisibleSecretsOfFolders } from "./secret-source";

/** A background job reads every shared secret of its own project's folders. */
const PLATFORM_READ = buildAbility([{ subject: "secrets", action: ["describeSecret", "readValue"], inverted: false }]);

export type PlatformFolder = { projectId: string; folderId: string; environment: string; secretPath: string };

const valueOf = async (secret: PlainSecret, place: { environment: string; secretPath: string }, expander: Expander) => {
  const value = secret.value();
  return hasReference(value)
    ? expander.expand(value, { ...place, key: secret.key, skipMultilineEncoding: secret.skipMultilineEncoding })
    : value;
};

/**
 * A folder's secrets as a job that delivers them elsewhere (a secret sync) reads them: the shared
 * values with their references expanded, then each import's secrets where the folder (or an earlier
 * import) has no secret of that key. Nobody's personal secrets. Who may point such a job at a folder
 * is decided when it is configured; the read itself is the platform's.
 */
export const readFolderForPlatform = async (
  deps: AppDeps,
  folder: PlatformFolder,
  /** Told of each folder a reference was read from (the job follows changes there too). */
  onReferenced?: (place: { environment: string; secretPath: string }) => void,
): Promise<Map<string, string>> => {
  const source = createSecretSource({ deps }, folder.projectId);
  const [rows, groups] = await Promise.all([
    listVisibleSecretsOfFolders(deps.db, [folder.folderId]),
    resolveImports(deps.db, [folder.folderId]),
  ]);
  source.seed(folder.environment, folder.secretPath, rows);
  const expander = createExpander(PLATFORM_READ, (environment, secretPath) => {
    onReferenced?.({ environment, secretPath });
    return source.load(environment, secretPath);
  });
  const values = new Map<string, string>();
  for (const secret of await source.open(rows)) {
    values.set(secret.key, await valueOf(secret, folder, expander));
    forgetPlaintext(secret);
  }
  for (const group of groups) {
    const opened = await source.open(group.secrets.map((s) => s.row));
    for (const [i, secret] of opened.entries()) {
      const { environment, secretPath } = group.secrets[i]!;
      if (!values.has(secret.key)) values.set(secret.key, await valueOf(secret, { environment, secretPath }, expander));
    }
  }
  return values;
};
