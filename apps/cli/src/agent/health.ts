import { createServer, type Server } from "node:http";

export type HealthReport = {
  status: "ok" | "degraded" | "starting";
  lastRenderAt: string | null;
  stream: "connected" | "polling";
  templates: { name: string; status: "ok" | "error" | "pending"; lastRenderAt: string | null; error?: string }[];
};

/** The report of templates as they stand: degraded when one fails, starting while one has not rendered. */
export const buildHealthReport = (input: {
  templates: readonly {
    spec: { name: string };
    status: "ok" | "error" | "pending";
    lastRenderAt?: Date;
    error?: string;
  }[];
  lastRenderAt: Date | undefined;
  streaming: boolean;
}): HealthReport => {
  const templates = input.templates.map((t) => ({
    name: t.spec.name,
    status: t.status,
    lastRenderAt: t.lastRenderAt?.toISOString() ?? null,
    ...(t.error ? { error: t.error } : {}),
  }));
  const status = templates.some((t) => t.status === "error")
    ? "degraded"
    : templates.some((t) => t.status === "pending")
      ? "starting"
      : "ok";
  return {
    status,
    lastRenderAt: input.lastRenderAt?.toISOString() ?? null,
    stream: input.streaming ? "connected" : "polling",
    templates,
  };
};

/** GET /healthz on a local address: the agent's report as JSON (names and states, never a value). */
export const startHealthServer = (host: string, port: number, report: () => HealthReport) =>
  new Promise<Server>((resolve, reject) => {
    const server = createServer((request, response) => {
      if (request.method !== "GET" || request.url?.split("?")[0] !== "/healthz") {
        response.writeHead(404, { "content-type": "application/json" }).end('{"message":"Not found"}');
        return;
      }
      const body = report();
      // Always 200: a failing template keeps its old file, which is no reason for an orchestrator to restart the agent.
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
    });
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve(server);
    });
  });
