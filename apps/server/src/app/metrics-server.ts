import { createServer, type Server } from "node:http";
import type { Logger } from "../lib/logger";

/**
 * `GET /metrics` in Prometheus text format on a listener of its own (METRICS_PORT, loopback by
 * default): whoever can reach that port may read the figures, and the API port never serves them.
 * In a cluster the primary serves it, aggregating every worker's registry.
 */
export const startMetricsServer = (
  port: number,
  host: string,
  logger: Logger,
  render: () => Promise<{ contentType: string; body: string }>,
): Server => {
  const server = createServer((req, res) => {
    if (req.method !== "GET" || (req.url ?? "").split("?")[0] !== "/metrics") {
      res.writeHead(404, { "content-type": "text/plain" }).end("Not found\n");
      return;
    }
    render().then(
      ({ contentType, body }) => res.writeHead(200, { "content-type": contentType }).end(body),
      (error: unknown) => {
        logger.error({ err: error }, "metrics collection failed");
        res.writeHead(500, { "content-type": "text/plain" }).end("Metrics unavailable\n");
      },
    );
  });
  server.listen(port, host, () => logger.info({ port, host }, "metrics listening"));
  return server;
};
