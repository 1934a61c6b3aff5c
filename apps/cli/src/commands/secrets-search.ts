import { Command, Option } from "commander";
import type { SecretSearchHit } from "@keyward/contract";
import { call, connect } from "../api";
import { CliError } from "../config";
import { printJson } from "../output";

type SearchOptions = {
  projectId: string;
  tag?: string;
  path?: string;
  env?: string;
  values?: boolean;
  json?: boolean;
  limit: string;
};

const PAGE = 200;

/**
 * `keyward secrets search <query>`: the project's secrets whose key holds the query (or matches it
 * as a glob such as `DB_*`), over every environment and folder the caller may see, following the
 * server's pages up to --limit results. `-` as the query searches by the other filters alone.
 */
export const searchCommand = () =>
  new Command("search")
    .argument("<query>", "part of the key (any case), a glob such as 'DB_*', or '-' for any key")
    .description("search a project's secrets by key, tag, path and environment")
    .requiredOption("--project-id <id>", "project id")
    .option("--tag <slugs>", "tag slugs, comma-separated (any of them)")
    .option("--path <path>", "folder path prefix (/app covers /app and below) or a glob (/app/**)")
    .option("--env <slug>", "only this environment")
    .option("--values", "print values too (where the caller may read them)")
    .option("--json", "print the results as JSON")
    .addOption(new Option("--limit <n>", "at most this many results").default("100"))
    .action(async (query: string, opts: SearchOptions) => {
      const limit = Number(opts.limit);
      if (!Number.isInteger(limit) || limit < 1) throw new CliError("--limit must be a positive integer");
      const api = await connect();
      const found: SecretSearchHit[] = [];
      let cursor: string | undefined;
      do {
        const page = await call(api, (client) =>
          client.secretSearch.search({
            params: { projectId: opts.projectId },
            query: {
              ...(query !== "-" ? { key: query } : {}),
              ...(opts.tag !== undefined ? { tag: opts.tag } : {}),
              ...(opts.path !== undefined ? { path: opts.path } : {}),
              ...(opts.env !== undefined ? { environment: opts.env } : {}),
              includeValues: opts.values ? "true" : "false",
              limit: Math.min(PAGE, limit - found.length),
              ...(cursor !== undefined ? { cursor } : {}),
            },
          }),
        );
        found.push(...page.secrets);
        cursor = page.nextCursor ?? undefined;
      } while (cursor !== undefined && found.length < limit);
      // The server answers an unknown environment with no results; say so instead of "no secrets found".
      if (found.length === 0 && opts.env !== undefined) {
        const { project } = await call(api, (client) => client.projects.get({ params: { projectId: opts.projectId } }));
        if (!project.environments.some((e) => e.slug === opts.env)) {
          const known = project.environments.map((e) => e.slug).join(", ");
          throw new CliError(`--env ${opts.env}: project ${project.name} has no such environment (it has: ${known})`);
        }
      }
      if (opts.json) return printJson({ secrets: found, more: cursor !== undefined });
      for (const hit of found) {
        const value = opts.values ? (hit.secretValueHidden ? "=<hidden>" : `=${JSON.stringify(hit.secretValue)}`) : "";
        const tags = hit.tags.length > 0 ? `  [${hit.tags.map((t) => t.slug).join(",")}]` : "";
        process.stdout.write(`${hit.environment}:${hit.secretPath}  ${hit.secretKey}${value}${tags}\n`);
      }
      if (found.length === 0) process.stderr.write("keyward: no secrets found\n");
      if (cursor !== undefined)
        process.stderr.write(`keyward: more results past ${limit}; raise --limit to see them\n`);
    });
