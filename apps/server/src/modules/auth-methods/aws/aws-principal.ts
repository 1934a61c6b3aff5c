import { UnauthorizedError } from "../../../errors";

/** The caller's ARN in the forms allowed-principal patterns are matched against. */
export type AwsPrincipal = {
  partition: string;
  service: string;
  accountId: string;
  resourceType: string;
  resourceName: string;
  /** `arn:<partition>:<service>::<account>:<type>/<name>`, path segments and session names dropped. */
  formattedArn: string;
  /** For an assumed role, the role itself: `arn:<partition>:iam::<account>:role/<role>`. */
  roleArn?: string;
};

const ARN = /^arn:(aws|aws-us-gov|aws-cn):(iam|sts)::(\d{12}):([A-Za-z-]+)(?:\/(.+))?$/;

export const parsePrincipalArn = (arn: string): AwsPrincipal => {
  const match = ARN.exec(arn);
  if (!match) throw new UnauthorizedError(`Unrecognized principal ARN: ${arn}`);
  const [, partition = "", service = "", accountId = "", resourceType = "", rest = ""] = match;
  const base = `arn:${partition}:${service}::${accountId}:`;
  if (resourceType === "root") {
    return { partition, service, accountId, resourceType, resourceName: "", formattedArn: `${base}root` };
  }
  const parts = rest.split("/").filter(Boolean);
  if (parts.length === 0) throw new UnauthorizedError(`Unrecognized principal ARN: ${arn}`);
  if (resourceType === "assumed-role") {
    const role = parts[0]!;
    return {
      partition,
      service,
      accountId,
      resourceType,
      resourceName: role,
      formattedArn: `${base}assumed-role/${role}`,
      roleArn: `arn:${partition}:iam::${accountId}:role/${role}`,
    };
  }
  if (resourceType === "user" || resourceType === "role" || resourceType === "federated-user") {
    const name = parts[parts.length - 1]!;
    return {
      partition,
      service,
      accountId,
      resourceType,
      resourceName: name,
      formattedArn: `${base}${resourceType}/${name}`,
    };
  }
  throw new UnauthorizedError(`Unrecognized principal type: ${resourceType}`);
};

/** An allowed-ARN entry as an anchored pattern: everything literal but `*`, which matches anything. */
const patternOf = (entry: string) =>
  new RegExp(
    `^${entry
      .split("*")
      .map((part) => part.replace(/[.+?^${}()|[\]\\/-]/g, "\\$&"))
      .join(".*")}$`,
  );

export const principalAllowed = (principal: AwsPrincipal, allowed: string[]) =>
  allowed.some((entry) => {
    const pattern = patternOf(entry);
    return pattern.test(principal.formattedArn) || (principal.roleArn !== undefined && pattern.test(principal.roleArn));
  });
