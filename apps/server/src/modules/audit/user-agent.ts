import type { UserAgentType } from "@keyward/contract";

/** The client family of a User-Agent header. */
export const userAgentTypeOf = (userAgent: string | null): UserAgentType => {
  if (!userAgent) return "other";
  if (userAgent.includes("InfisicalNodeSDK")) return "InfisicalNodeSDK";
  if (userAgent.includes("InfisicalPythonSDK")) return "InfisicalPythonSDK";
  const lower = userAgent.toLowerCase();
  if (lower.includes("k8-operator")) return "k8-operator";
  if (lower.includes("terraform")) return "terraform";
  if (/\bcli\b|-cli\b/.test(lower)) return "cli";
  if (lower.startsWith("mozilla/")) return "web";
  return "other";
};
