/** Writers for `--output json` and `keyward export`. Values are printed as given, never logged elsewhere. */
export const printJson = (value: unknown): void => {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
};

const dotenvValue = (value: string) =>
  /^[\w@%+=:,./-]*$/.test(value)
    ? value
    : `"${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`;

export const formatSecrets = (secrets: Record<string, string>, format: "dotenv" | "json" | "yaml") => {
  if (format === "json") return `${JSON.stringify(secrets, null, 2)}\n`;
  const entries = Object.entries(secrets);
  // A JSON string is a valid YAML double-quoted scalar, so quoting both sides keeps any key or value intact.
  if (format === "yaml") return entries.map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}\n`).join("");
  return entries.map(([k, v]) => `${k}=${dotenvValue(v)}\n`).join("");
};
