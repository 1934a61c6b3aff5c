import { Command } from "commander";
import { Agent } from "../agent/agent";
import { jsonLogger, reasonOf } from "../agent/log";

export const agentCommand = () =>
  new Command("agent")
    .description(
      "keep files rendered from templates of secrets current (see docs/agent.md); SIGHUP re-reads the config, SIGTERM revokes leases and the token and exits",
    )
    .requiredOption("--config <file>", "the agent's YAML config")
    .action(async (opts: { config: string }) => {
      const agent = new Agent(opts.config, jsonLogger);
      // Signals are taken before anything slow, so a SIGTERM during the first login still cleans up.
      const started = agent.start();
      // A SIGHUP during the start is handled once the start is done.
      let reloading = started.catch(() => undefined);
      const onHup = () => {
        reloading = reloading
          .then(() => agent.reload())
          .catch((error: unknown) => {
            jsonLogger.error("config reload failed", { reason: reasonOf(error) });
          });
      };
      const done = new Promise<void>((resolve) => {
        const onStop = (signal: NodeJS.Signals) => {
          jsonLogger.info("stopping", { signal });
          void agent.stop().finally(resolve);
        };
        process.once("SIGTERM", onStop);
        process.once("SIGINT", onStop);
      });
      process.on("SIGHUP", onHup);
      await started;
      if (agent.exitAfterAuth) {
        // Infisical's `exit-after-auth`: logged in, sinks and templates written once; leave them be.
        jsonLogger.info("exiting after the first login and render (exit-after-auth)");
        await agent.stop(false);
        process.exit(0);
      }
      await done;
      process.off("SIGHUP", onHup);
      process.exit(0);
    });
