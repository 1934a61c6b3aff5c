import { Agent, request } from "node:http";
import { describe, expect, it } from "vitest";
import { createTestDatabaseUrl } from "../helpers/database";
import { spawnKeyward, stopKeyward } from "./spawn";

type Outcome =
  | { kind: "answer"; status: number; connection?: string; afterSignal: boolean }
  | { kind: "refused" }
  | { kind: "cut"; code?: string };

/** One request on a keep-alive agent; a connection refused means it was never sent, anything else failing cut it. */
const send = (
  agent: Agent,
  port: number,
  token: string,
  method: "GET" | "POST",
  path: string,
  body: string | undefined,
  signalled: () => boolean,
) =>
  new Promise<Outcome>((resolve) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        method,
        path,
        agent,
        headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
      },
      (res) => {
        res.resume();
        res.on("end", () =>
          resolve({
            kind: "answer",
            status: res.statusCode ?? 0,
            connection: res.headers.connection,
            afterSignal: signalled(),
          }),
        );
        res.on("error", (error: NodeJS.ErrnoException) => resolve({ kind: "cut", code: error.code }));
      },
    );
    req.on("error", (error: NodeJS.ErrnoException) =>
      resolve(error.code === "ECONNREFUSED" ? { kind: "refused" } : { kind: "cut", code: error.code }),
    );
    req.end(body);
  });

describe("SIGTERM under load", () => {
  it("turns unready, closes keep-alive connections after their answer and cuts no request", async () => {
    const databaseUrl = await createTestDatabaseUrl();
    const server = await spawnKeyward({
      WORKERS: "1",
      SHUTDOWN_TIMEOUT_MS: "10000",
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    });
    try {
      let signalled = false;
      const outcomes: Outcome[] = [];
      const client = async (i: number) => {
        const agent = new Agent({ keepAlive: true, maxSockets: 1 });
        try {
          for (let n = 0; ; n++) {
            const write = (i + n) % 2 === 0;
            const outcome = await send(
              agent,
              server.port,
              server.rootToken,
              write ? "POST" : "GET",
              write ? "/api/v1/projects" : "/api/v1/identities",
              write ? JSON.stringify({ projectName: `drain-${i}-${n}` }) : undefined,
              () => signalled,
            );
            outcomes.push(outcome);
            if (outcome.kind !== "answer") return;
          }
        } finally {
          agent.destroy();
        }
      };
      const clients = Array.from({ length: 8 }, (_, i) => client(i));
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const signalledAt = Date.now();
      server.child.kill("SIGTERM");
      signalled = true;
      await Promise.all(clients);
      const [code] = await server.exited;
      expect(code).toBe(0);
      // Drained without the forced close at SHUTDOWN_TIMEOUT_MS.
      expect(Date.now() - signalledAt).toBeLessThan(8_000);
      expect(server.logs().join("\n")).not.toContain("shutdown timeout");

      const cut = outcomes.filter((o) => o.kind === "cut");
      expect(cut).toEqual([]);
      const answers = outcomes.flatMap((o) => (o.kind === "answer" ? [o] : []));
      expect(answers.filter((a) => a.status !== 200)).toEqual([]);
      // Answers the server wrote after it saw the signal tell keep-alive clients to go elsewhere.
      expect(answers.some((a) => a.afterSignal && a.connection === "close")).toBe(true);
      expect(answers.length).toBeGreaterThan(8);
      const logs = server.logs().join("\n");
      expect(logs).not.toMatch(/unhandled error|destroyed/);
    } finally {
      await stopKeyward(server);
    }
  }, 90_000);

  it("reports not ready at once on an open keep-alive connection, answering with Connection: close", async () => {
    const server = await spawnKeyward({ WORKERS: "1" });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const readStatus = () =>
        new Promise<{ ready: boolean; connection?: string }>((resolve, reject) => {
          request({ host: "127.0.0.1", port: server.port, path: "/api/status", agent }, (res) => {
            let text = "";
            res.on("data", (chunk: Buffer) => (text += chunk.toString()));
            res.on("end", () =>
              resolve({ ...(JSON.parse(text) as { ready: boolean }), connection: res.headers.connection }),
            );
          })
            .on("error", reject)
            .end();
        });
      expect(await readStatus()).toMatchObject({ ready: true, connection: "keep-alive" });
      server.child.kill("SIGTERM");
      // The signal reaches the server a moment later; until then it still reports ready.
      let readiness = await readStatus();
      for (let i = 0; i < 50 && readiness.ready; i++) readiness = await readStatus();
      expect(readiness).toMatchObject({ ready: false, connection: "close" });
      const [code] = await server.exited;
      expect(code).toBe(0);
    } finally {
      agent.destroy();
      await stopKeyward(server);
    }
  }, 60_000);
});
