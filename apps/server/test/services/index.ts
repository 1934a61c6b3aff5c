import { startPostgresTarget } from "./postgres-target";
import { startRedis } from "./redis";
import { startSlapd } from "./slapd";
import { startOidcProvider } from "./oidc-provider";

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

export const startTestServices = async () => {
  const stops: Stop[] = [];
  for (const start of starters) stops.push(await start());
  return async () => {
    for (const stop of stops.reverse()) await stop();
  };
};
