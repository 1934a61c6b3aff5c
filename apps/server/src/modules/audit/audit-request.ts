import type { Request } from "express";

/** Request fields that name what an operation touched; never values, secrets or credentials. */
const NAMING_KEYS: readonly string[] = [
  "environment",
  "secretPath",
  "path",
  "type",
  "name",
  "slug",
  "identityId",
  "folderId",
  "keyId",
  "leaseId",
  "version",
  "secretId",
  "secretKey",
  "newSecretName",
  "caId",
  "profileId",
  "certificateId",
  "groupId",
  "username",
  "machineIdentityId",
  "templateId",
  "clientSecretId",
  "clientId",
  "tokenId",
  "gatewayId",
  "roleId",
  "privilegeId",
  "secretImportId",
  "tagId",
  "tagSlug",
  "environmentId",
  "signingAlgorithm",
  "keyUsage",
  "encryptionAlgorithm",
  "provider",
  "logStreamId",
  "projectSlug",
  "privilegeSlug",
  "dynamicSecretName",
  "groupIdOrName",
  "folderIdOrName",
  "isDigest",
  "recursive",
  "include_imports",
  "includeImports",
  "expandSecretReferences",
];

const MAX_TEXT = 256;
const MAX_ITEMS = 1000;

/** At most MAX_TEXT UTF-16 units, cut between code points: half a surrogate pair is not storable text. */
const shortened = (text: string) => {
  if (text.length <= MAX_TEXT) return text;
  const last = text.charCodeAt(MAX_TEXT - 1);
  const end = last >= 0xd800 && last <= 0xdbff ? MAX_TEXT - 1 : MAX_TEXT;
  return `${text.slice(0, end)}…`;
};

const scalar = (value: unknown): string | number | boolean | undefined => {
  if (typeof value === "string") return shortened(value);
  if (typeof value === "number" || typeof value === "boolean") return value;
  return undefined;
};

const take = (target: Record<string, unknown>, source: unknown, all: boolean) => {
  if (!source || typeof source !== "object") return;
  for (const [key, value] of Object.entries(source as Record<string, unknown>)) {
    if (!all && !NAMING_KEYS.includes(key)) continue;
    const plain = scalar(value);
    // A path's `secretName` is recorded as `secretKey`, the name events use for a secret.
    if (plain !== undefined) target[key === "secretName" && typeof plain === "string" ? "secretKey" : key] = plain;
  }
};

/**
 * The default metadata of a request's event: its path parameters (ids and names), and the naming
 * fields of its query and body. Modules add what only they know (new ids, versions) with `noteAudit`.
 */
export const requestMetadata = (req: Pick<Request, "params" | "query" | "body">): Record<string, unknown> => {
  const metadata: Record<string, unknown> = {};
  take(metadata, req.query, false);
  take(metadata, req.body, false);
  take(metadata, req.params, true);
  const body = req.body as Record<string, unknown> | undefined;
  const project = body?.projectId ?? body?.workspaceId ?? req.query?.projectId ?? req.query?.workspaceId;
  if (typeof project === "string") metadata.projectId = project;
  if (typeof metadata.secretPath === "string" && metadata.secretPath.length > 1) {
    metadata.secretPath = metadata.secretPath.replace(/\/+$/, "") || "/";
  }
  const items = body?.secrets;
  if (Array.isArray(items)) {
    metadata.secretKeys = items
      .slice(0, MAX_ITEMS)
      .map((item) =>
        scalar(
          (item as Record<string, unknown> | null)?.secretKey ?? (item as Record<string, unknown> | null)?.secretName,
        ),
      )
      .filter((key) => key !== undefined);
  }
  return metadata;
};
