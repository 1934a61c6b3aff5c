import { Command, Option } from "commander";
import type { ChangeRequestDetail } from "@keyward/contract";
import { call, connect } from "../api";
import { printJson } from "../output";

type Output = { output?: "json" | "text" };
const outputOption = () => new Option("--output <format>", "output format").choices(["text", "json"]).default("text");

const who = (r: { committerType: string; committerId: string }) => `${r.committerType} ${r.committerId}`;

const summary = (r: ChangeRequestDetail) =>
  `${r.id}  ${r.status}${r.hasMerged ? " (merged)" : ""}  ${r.environment}:${r.secretPath}  ` +
  `${r.approvalCount}/${r.policy.approvals} approvals  by ${who(r)}\n`;

/** One line per change: what it does to which key, and the new value where the caller may read it. */
const describeChanges = (r: ChangeRequestDetail) =>
  r.commits
    .map((c) => {
      const name =
        c.newSecretName && c.newSecretName !== c.secretKey ? `${c.secretKey} -> ${c.newSecretName}` : c.secretKey;
      if (c.op === "delete") return `  - ${name}\n`;
      const value = !c.changesValue ? "(value unchanged)" : c.secretValueHidden ? "(value hidden)" : c.secretValue;
      return `  ${c.op === "create" ? "+" : "~"} ${name} = ${value}\n`;
    })
    .join("");

export const approvalsCommand = () => {
  const root = new Command("approvals").description("change requests on protected folders: list, show, review, merge");

  root
    .command("list")
    .description("change requests of a project")
    .requiredOption("--project-id <id>", "project id")
    .option("--env <slug>", "environment slug")
    .option("--waiting", "only the requests you are asked to review")
    .addOption(new Option("--status <status>", "open or closed").choices(["open", "close"]))
    .addOption(outputOption())
    .action(
      async (opts: Output & { projectId: string; env?: string; waiting?: boolean; status?: "open" | "close" }) => {
        const { approvals } = await call(await connect(), (client) =>
          client.secretApprovalRequests.list({
            query: {
              projectId: opts.projectId,
              environment: opts.env,
              status: opts.status,
              reviewable: opts.waiting ? "true" : undefined,
              limit: 100,
              offset: 0,
            },
          }),
        );
        if (opts.output === "json") return printJson(approvals);
        for (const r of approvals) process.stdout.write(summary(r));
      },
    );

  root
    .command("show")
    .argument("<requestId>", "change request id")
    .description("a change request's changes and reviews")
    .addOption(outputOption())
    .action(async (requestId: string, opts: Output) => {
      const { approval } = await call(await connect(), (client) =>
        client.secretApprovalRequests.get({ params: { requestId } }),
      );
      if (opts.output === "json") return printJson(approval);
      process.stdout.write(summary(approval) + describeChanges(approval));
      for (const r of approval.reviewers)
        process.stdout.write(
          `  ${r.status} by ${r.reviewerType} ${r.reviewerId}${r.comment ? `: ${r.comment}` : ""}\n`,
        );
      for (const c of approval.conflicts) process.stdout.write(`  conflict: ${c.secretKey} ${c.reason}\n`);
    });

  for (const [verb, status] of [
    ["approve", "approved"],
    ["reject", "rejected"],
  ] as const)
    root
      .command(verb)
      .argument("<requestId>", "change request id")
      .description(`${verb} a change request`)
      .option("--comment <text>", "a comment on record with the review")
      .action(async (requestId: string, opts: { comment?: string }) => {
        await call(await connect(), (client) =>
          client.secretApprovalRequests.review({ params: { requestId }, body: { status, comment: opts.comment } }),
        );
        process.stdout.write(`${status} ${requestId}\n`);
      });

  root
    .command("merge")
    .argument("<requestId>", "change request id")
    .description("apply an approved change request")
    .option("--bypass-reason <text>", "merge without the approvals (bypassers of a soft policy only)")
    .action(async (requestId: string, opts: { bypassReason?: string }) => {
      await call(await connect(), (client) =>
        client.secretApprovalRequests.merge({ params: { requestId }, body: { bypassReason: opts.bypassReason } }),
      );
      process.stdout.write(`merged ${requestId}\n`);
    });

  return root;
};
