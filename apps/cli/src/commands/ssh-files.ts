import { CliError } from "../config";

const KRL_MAGIC = Buffer.from("SSHKRL\n\0", "latin1");

/**
 * A CA's revocation list from `<url>/api/v1/ssh/ca/:id/krl`, checked whole: sshd refuses every key when
 * its RevokedKeys file is missing or not a KRL, so anything else is an error naming the file kept.
 */
export const downloadKrl = async (baseUrl: string, caId: string, keptFile: string) => {
  const target = new URL(`/api/v1/ssh/ca/${encodeURIComponent(caId)}/krl`, baseUrl).toString();
  let res: Response;
  try {
    res = await fetch(target, { signal: AbortSignal.timeout(30_000) });
  } catch (error) {
    throw new CliError(`Could not download ${target}: ${(error as Error).message}; ${keptFile} left as it was`);
  }
  const body = Buffer.from(await res.arrayBuffer());
  if (!res.ok) throw new CliError(`${target} answered ${res.status}; ${keptFile} left as it was`);
  if (body.length < 44 || !body.subarray(0, 8).equals(KRL_MAGIC))
    throw new CliError(`${target} did not answer a key revocation list; ${keptFile} left as it was`);
  return { krl: body, version: body.readBigUInt64BE(12) };
};

/**
 * `sshd_config` with each directive set to its value: sshd takes the first value of a directive, so a
 * missing one is added at the top (before any `Match` block). A directive already set to another value
 * is replaced only with `force`; `HostKey` may repeat, so it is added unless that exact key is listed.
 */
export const configureSshd = (
  config: string,
  directives: readonly (readonly [keyword: string, value: string])[],
  force: boolean,
) => {
  const lines = config.split("\n");
  const added: string[] = [];
  for (const [keyword, value] of directives) {
    const wanted = `${keyword} ${value}`;
    const matches = lines
      .map((line, index) => ({ index, words: line.trim().split(/\s+/) }))
      .filter(({ words }) => words[0]?.toLowerCase() === keyword.toLowerCase());
    if (matches.some(({ words }) => words.slice(1).join(" ") === value)) continue;
    if (matches.length === 0 || keyword === "HostKey") {
      added.push(wanted);
      continue;
    }
    if (!force) throw new CliError(`sshd_config already sets ${keyword} to another value; --force replaces it`);
    for (const { index } of matches) lines[index] = `# ${lines[index]}  (replaced by keyward)`;
    added.push(wanted);
  }
  return added.length === 0 ? config : [`# Added by keyward ssh add-host`, ...added, "", ...lines].join("\n");
};
