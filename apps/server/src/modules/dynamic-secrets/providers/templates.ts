import { BadRequestError } from "../../../errors";

const EXPRESSION = /{{\s*([^}]*?)\s*}}/g;

/** Reject a statement template that uses anything but the named variables (checked on write). */
export const assertTemplate = (label: string, template: string | undefined, allowed: readonly string[]) => {
  if (!template) return;
  for (const match of template.matchAll(EXPRESSION)) {
    const name = match[1] ?? "";
    if (!allowed.includes(name)) {
      throw new BadRequestError(
        `${label} template may only use ${allowed.map((a) => `{{${a}}}`).join(", ")}; found {{${name}}}`,
      );
    }
  }
};

export const renderTemplate = (template: string, values: Record<string, string>) =>
  template.replace(EXPRESSION, (_whole, name: string) => values[name] ?? "");

/** Statements are separated by `;` (as the reference splits them); blank ones are dropped. */
export const splitStatements = (rendered: string) =>
  rendered
    .split(";")
    .map((statement) => statement.trim())
    .filter((statement) => statement.length > 0);

/** The credential name of a lease: the secret's prefix and the lease id, so strays can be traced to a lease. */
export const leaseEntityName = (entityPrefix: string, leaseId: string) =>
  `${entityPrefix}_${leaseId.replace(/-/g, "")}`;

/** Finds the lease id inside a credential name built by leaseEntityName (possibly wrapped by a template). */
export const leaseIdFromEntityName = (entityPrefix: string, name: string): string | undefined => {
  const at = name.indexOf(`${entityPrefix}_`);
  if (at < 0) return undefined;
  const hex = name.slice(at + entityPrefix.length + 1, at + entityPrefix.length + 33);
  if (!/^[0-9a-f]{32}$/.test(hex)) return undefined;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};

/** Applies the username template (reference expressions) around the lease's traceable name. */
export const renderUsername = (template: string | null, randomUsername: string, identityName: string) => {
  if (!template) return randomUsername;
  return renderTemplate(template, {
    randomUsername,
    unixTimestamp: String(Math.floor(Date.now() / 1000)),
    "identity.name": identityName.toLowerCase().replace(/[^a-z0-9_-]/g, "_"),
  }).replace(/[^A-Za-z0-9_.-]/g, "_");
};

export type { PasswordRequirements } from "../../connectors/credentials";
// Lease, revocation and sweeper code reads these through the provider templates.
export { generatePassword, redactSecrets } from "../../connectors/credentials";
