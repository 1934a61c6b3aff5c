import { startMariadb } from "./mariadb";
import { startPostgresTarget } from "./postgres-target";
import { startRabbitmq } from "./rabbitmq";
import { startRedis } from "./redis";
import { startSlapd } from "./slapd";
import { startOidcProvider } from "./oidc-provider";
import { startServerBundle } from "./server-bundle";

/**
 * Real servers the suites need (directory servers, target databases, identity providers), started
 * once per run by the global setup. Each service file exports a starter that publishes its address
 * through an environment variable and returns a stop function; add one line per service below.
 */
type Stop = () => Promise<void> | void;
type Starter = () => Promise<Stop>;

const starters: Starter[] = [];
starters.push(startPostgresTarget);
starters.push(startRedis);
starters.push(startSlapd);
starters.push(startOidcProvider);
starters.push(startMariadb);
starters.push(startRabbitmq);
starters.push(startServerBundle);

/** All at once (RabbitMQ's Erlang start-up alone takes seconds); if one fails, the others are stopped. */
export const startTestServices = async () => {
  const began = performance.now();
  const took: string[] = [];
  const timed = async (start: Starter) => {
    const stop = await start();
    took.push(`${start.name.replace(/^start/, "")} ${((performance.now() - began) / 1000).toFixed(1)} s`);
    return stop;
  };
  const started = await Promise.allSettled(starters.map(timed));
  // One line in the run's log says which service the suite waited for.
  process.stderr.write(`test services ready: ${took.join(", ")}\n`);
  const stops = started.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop();
  };
  const failed = started.find((result) => result.status === "rejected");
  if (failed) {
    await stopAll();
    throw failed.reason;
  }
  return stopAll;
};
