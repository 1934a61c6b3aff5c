import { Command, Option } from "commander";
import { call, connect } from "../api";
import { printJson } from "../output";

type LeaseScope = { projectSlug: string; env: string; path: string; output: string };

const scoped = (command: Command) =>
  command
    .requiredOption("--project-slug <slug>", "project slug")
    .requiredOption("--env <slug>", "environment slug")
    .option("--path <path>", "secret path", "/")
    .addOption(new Option("--output <format>", "output format").choices(["text", "json"]).default("text"));

export const dynamicSecretsCommand = () => {
  const root = new Command("dynamic-secrets").description("dynamic secrets");
  const lease = root.command("lease").description("lease credentials from a dynamic secret");
  scoped(lease.command("create").argument("<name>", "dynamic secret name").description("create a lease"))
    .option("--ttl <ttl>", "lease TTL, e.g. 1h")
    .action(async (name: string, opts: LeaseScope & { ttl?: string }) => {
      const body = await call(await connect(), (client) =>
        client.dynamicSecretLeases.create({
          body: {
            dynamicSecretName: name,
            projectSlug: opts.projectSlug,
            environmentSlug: opts.env,
            path: opts.path,
            ttl: opts.ttl,
          },
        }),
      );
      if (opts.output === "json") return printJson({ lease: body.lease, data: body.data });
      process.stdout.write(`lease ${body.lease.id} expires ${body.lease.expireAt}\n`);
      for (const [k, v] of Object.entries(body.data)) process.stdout.write(`${k}=${v}\n`);
    });
  scoped(lease.command("renew").argument("<leaseId>", "lease id").description("extend a lease"))
    .option("--ttl <ttl>", "extension, e.g. 1h")
    .action(async (leaseId: string, opts: LeaseScope & { ttl?: string }) => {
      const { lease: renewed } = await call(await connect(), (client) =>
        client.dynamicSecretLeases.renew({
          params: { leaseId },
          body: { projectSlug: opts.projectSlug, environmentSlug: opts.env, path: opts.path, ttl: opts.ttl },
        }),
      );
      if (opts.output === "json") return printJson(renewed);
      process.stdout.write(`lease ${renewed.id} expires ${renewed.expireAt}\n`);
    });
  scoped(lease.command("revoke").argument("<leaseId>", "lease id").description("revoke a lease"))
    .option("--force", "drop the lease even when the provider cannot be reached")
    .action(async (leaseId: string, opts: LeaseScope & { force?: boolean }) => {
      const { lease: revoked } = await call(await connect(), (client) =>
        client.dynamicSecretLeases.delete({
          params: { leaseId },
          body: {
            projectSlug: opts.projectSlug,
            environmentSlug: opts.env,
            path: opts.path,
            isForced: opts.force ?? false,
          },
        }),
      );
      if (opts.output === "json") return printJson(revoked);
      process.stdout.write(`lease ${revoked.id} revoked\n`);
    });
  return root;
};
