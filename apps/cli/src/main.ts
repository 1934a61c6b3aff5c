import { Command, CommanderError } from "commander";
import { CliError } from "./config";
import { agentCommand } from "./commands/agent";
import { approvalsCommand } from "./commands/approvals";
import { loginCommand, logoutCommand, tokenCommand, whoamiCommand } from "./commands/auth";
import { dynamicSecretsCommand } from "./commands/leases";
import { runCommand } from "./commands/run";
import { exportCommand, secretsCommand } from "./commands/secrets";
import { sshCommand } from "./commands/ssh";

const program = new Command("keyward")
  .description("Keyward from the command line. KEYWARD_URL and KEYWARD_TOKEN override the stored profile.")
  .version("0.0.1")
  .showHelpAfterError()
  .exitOverride();

for (const command of [
  loginCommand(),
  logoutCommand(),
  whoamiCommand(),
  runCommand(),
  secretsCommand(),
  exportCommand(),
  dynamicSecretsCommand(),
  tokenCommand(),
  agentCommand(),
  approvalsCommand(),
  sshCommand(),
]) {
  program.addCommand(command);
}
for (const command of program.commands) command.exitOverride();
for (const command of program.commands.flatMap((c) => c.commands)) command.exitOverride();

program.parseAsync(process.argv).catch((error: unknown) => {
  if (error instanceof CommanderError) {
    process.exitCode = error.exitCode;
    return;
  }
  if (error instanceof CliError) {
    process.stderr.write(`keyward: ${error.message}\n`);
    process.exitCode = error.exitCode;
    return;
  }
  process.stderr.write(`keyward: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
