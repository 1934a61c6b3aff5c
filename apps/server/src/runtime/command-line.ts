/** What the server entry was asked to do: serve (no argument), or write or restore a backup. */
export type Command = { kind: "serve" } | { kind: "backup"; file: string } | { kind: "restore"; file: string };

export const USAGE = "usage: node dist/main.js [backup --out FILE | restore --in FILE] (no argument: serve)";

/** The command of `args` (process.argv after the script), or undefined for anything it does not understand. */
export const parseCommand = (args: readonly string[]): Command | undefined => {
  if (args.length === 0) return { kind: "serve" };
  const [name, ...rest] = args;
  const flag = name === "backup" ? "--out" : name === "restore" ? "--in" : undefined;
  if (!flag) return undefined;
  let file: string | undefined;
  if (rest.length === 2 && rest[0] === flag) file = rest[1];
  else if (rest.length === 1 && rest[0]!.startsWith(`${flag}=`)) file = rest[0]!.slice(flag.length + 1);
  if (!file || file.startsWith("-")) return undefined;
  return name === "backup" ? { kind: "backup", file } : { kind: "restore", file };
};

/** A command's failure as its one line: a refusal as it is worded, anything else after `<verb> failed:`. */
export const failureLine = (verb: string, error: unknown, refusal: (error: unknown) => boolean) => {
  const message = error instanceof Error ? error.message : String(error);
  return refusal(error) ? message : `${verb} failed: ${message.split("\n")[0]}`;
};
