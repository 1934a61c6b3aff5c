import type { contract } from "@keyward/contract";
import { ok, type KeywardClient } from "@keyward/client";
import { isForbidden } from "../ui/components";

type ListQuery = typeof contract.secretsV3.list.query._input;

/**
 * A folder's secrets with their values where the caller may read them. A caller who may see names but
 * read no value at all is refused a list with values (403): the names are listed again without them,
 * each marked hidden, so the screen shows what the caller may see and offers to request access.
 */
export const listFolderSecrets = async (client: KeywardClient, query: Omit<ListQuery, "viewSecretValue">) => {
  try {
    return await ok(client.secretsV3.list({ query: { ...query, viewSecretValue: "true" } }));
  } catch (error) {
    if (!isForbidden(error)) throw error;
    return ok(client.secretsV3.list({ query: { ...query, viewSecretValue: "false" } }));
  }
};
