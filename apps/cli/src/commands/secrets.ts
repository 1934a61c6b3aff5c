import { Command, Option } from "commander";
import type { ChangeRequest } from "@keyward/contract";
import { call, connect, ServerError } from "../api";
import { CliError } from "../config";
import { formatSecrets, printJson } from "../output";
import { fetchSecretMap, pathsOf, withScope, type ScopeOptions } from "../scope";
import { searchCommand } from "./secrets-search";

type Output = { output?: "json" | "text" };
const outputOption = () => new Option("--output <format>", "output format").choices(["text", "json"]).default("text");

const parseAssignments = (pairs: string[]) =>
  pairs.map((pair) => {
    const at = pair.indexOf("=");
    if (at <= 0) throw new CliError(`Expected KEY=VALUE, got "${pair}"`);
    return { secretKey: pair.slice(0, at), secretValue: pair.slice(at + 1) };
  });

/**
 * A change policy protects the folder: nothing was written, a change request waits for reviewers.
 * Said on stderr (and as JSON with --output json) so no script takes it for a write.
 */
const reportChangeRequest = (approval: ChangeRequest, opts: Output) => {
  if (opts.output === "json") printJson({ approval });
  process.stderr.write(
    `A change policy protects ${approval.environment}:${approval.secretPath}: nothing was written yet.\n` +
      `Change request ${approval.id} is open for review (keyward approvals show ${approval.id}).\n`,
  );
  process.exitCode = 3;
};

export const secretsCommand = () => {
  const secrets = new Command("secrets").description("read and write the secrets of a folder");

  withScope(secrets.command("list").description("list secrets (name and value)"))
    .addOption(outputOption())
    .action(async (opts: ScopeOptions & Output) => {
      const map = await fetchSecretMap(await connect(), opts);
      if (opts.output === "json") return printJson(map);
      process.stdout.write(formatSecrets(map, "dotenv"));
    });

  withScope(secrets.command("get").argument("<name>", "secret name").description("read one secret"), {
    multiPath: false,
  })
    .option("--plain", "print only the value")
    .addOption(outputOption())
    .action(async (name: string, opts: ScopeOptions & Output & { plain?: boolean }) => {
      const { secret } = await call(await connect(), (client) =>
        client.secretsV3.get({
          params: { secretName: name },
          query: {
            workspaceId: opts.projectId,
            environment: opts.env,
            secretPath: pathsOf(opts)[0],
            include_imports: opts.includeImports ? "true" : "false",
            expandSecretReferences: opts.expand ? "true" : "false",
          },
        }),
      );
      if (opts.plain) return void process.stdout.write(`${secret.secretValue}\n`);
      if (opts.output === "json") return printJson(secret);
      process.stdout.write(`${secret.secretKey}=${secret.secretValue}\n`);
    });

  withScope(secrets.command("set").argument("<pairs...>", "KEY=VALUE pairs").description("create or update secrets"), {
    multiPath: false,
  })
    .addOption(outputOption())
    .action(async (pairs: string[], opts: ScopeOptions & Output) => {
      const items = parseAssignments(pairs);
      const answer = await call(await connect(), (client) =>
        client.secretsV4.batchUpdate({
          body: {
            projectId: opts.projectId,
            environment: opts.env,
            secretPath: pathsOf(opts)[0],
            mode: "upsert",
            secrets: items,
          },
        }),
      );
      if ("approval" in answer) return reportChangeRequest(answer.approval, opts);
      if (opts.output === "json") return printJson(answer.secrets);
      for (const s of answer.secrets) process.stdout.write(`set ${s.secretKey}\n`);
    });

  withScope(secrets.command("delete").argument("<names...>", "secret names").description("delete secrets"), {
    multiPath: false,
  })
    .addOption(outputOption())
    .action(async (names: string[], opts: ScopeOptions & Output) => {
      const secretPath = pathsOf(opts)[0]!;
      const answer = await call(await connect(), (client) =>
        client.secretsV4.batchDelete({
          body: {
            projectId: opts.projectId,
            environment: opts.env,
            secretPath,
            secrets: names.map((secretKey) => ({ secretKey })),
          },
        }),
      ).catch((error: unknown) => {
        // The server's 404 does not say which name is missing; the names asked for do. The delete is
        // all or nothing, so nothing was deleted.
        if (error instanceof ServerError && error.status === 404) {
          const which =
            names.length === 1 ? `${names[0]} does not exist` : `one or more of ${names.join(", ")} do not exist`;
          throw new CliError(
            `Secret not found: ${which} in ${opts.env}:${secretPath}; nothing was deleted (server: ${error.serverMessage})`,
          );
        }
        throw error;
      });
      if ("approval" in answer) return reportChangeRequest(answer.approval, opts);
      if (opts.output === "json") return printJson(answer.secrets);
      for (const s of answer.secrets) process.stdout.write(`deleted ${s.secretKey}\n`);
    });

  secrets.addCommand(searchCommand());
  return secrets;
};

export const exportCommand = () =>
  withScope(new Command("export").description("print the secrets as dotenv, JSON or YAML"))
    .addOption(new Option("--format <format>", "output format").choices(["dotenv", "json", "yaml"]).default("dotenv"))
    .action(async (opts: ScopeOptions & { format: "dotenv" | "json" | "yaml" }) => {
      process.stdout.write(formatSecrets(await fetchSecretMap(await connect(), opts), opts.format));
    });
