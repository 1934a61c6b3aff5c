import { Agent, request } from "node:http";

/** A request exactly as it goes on the wire: the path is sent as given, with no re-encoding. */
export type RawRequest = {
  label: string;
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: Buffer;
  /** The request must be refused (a 4xx); a success is a violation too. */
  mustFail?: boolean;
};

export type RawResponse = { status: number; headers: Record<string, string | string[] | undefined>; text: string };

export type Violation = { request: RawRequest; problem: string; status?: number; text?: string };

/** KEYWARD_FUZZ_TRACE=1 prints every answer's status, to see how deep the generated requests get. */
const TRACE = process.env.KEYWARD_FUZZ_TRACE === "1";

const agent = new Agent({ keepAlive: true, maxSockets: 8 });

/**
 * Sends one request; an answer that never comes (reset, hang-up, 10 s of silence) rejects. A reset of
 * a reused keep-alive socket is the server closing it as idle while the request was on its way (the
 * race node's documentation describes): that one is retried once on a new connection.
 */
export const send = async (baseUrl: string, req: RawRequest): Promise<RawResponse> => {
  try {
    return await sendOnce(baseUrl, req, agent);
  } catch (error) {
    if (!(error as { reusedSocket?: boolean }).reusedSocket) throw error;
    return sendOnce(baseUrl, req, false);
  }
};

const sendOnce = (baseUrl: string, req: RawRequest, via: Agent | false): Promise<RawResponse> =>
  new Promise((resolve, reject) => {
    const url = new URL(baseUrl);
    const headers: Record<string, string | number> = { ...req.headers };
    if (req.body) headers["content-length"] = req.body.length;
    const outgoing = request(
      { host: url.hostname, port: url.port, method: req.method, path: req.path, headers, agent: via, timeout: 10_000 },
      (res) => {
        // A stream that opened (the events stream) has answered: its body never ends by itself.
        if (String(res.headers["content-type"] ?? "").startsWith("text/event-stream")) {
          res.destroy();
          return resolve({ status: res.statusCode ?? 0, headers: res.headers, text: "" });
        }
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString("utf8") }),
        );
        res.on("error", reject);
      },
    );
    outgoing.on("timeout", () => outgoing.destroy(new Error("no answer within 10 s")));
    outgoing.on("error", (error: Error & { code?: string }) =>
      reject(Object.assign(error, { reusedSocket: outgoing.reusedSocket && error.code === "ECONNRESET" })),
    );
    outgoing.end(req.body);
  });

const STACK_TRACE = /\n\s+at .+:\d+:\d+|node_modules|\/src\/[\w/-]+\.ts/;

/** What is wrong with an answer, if anything: a 5xx, an error that is not the spec's JSON body, a stack trace. */
export const problemWith = (res: RawResponse): string | undefined => {
  if (res.status >= 500) return `server error ${res.status}`;
  if (STACK_TRACE.test(res.text)) return "stack trace or source path in the answer";
  if (res.status < 400) return undefined;
  const type = String(res.headers["content-type"] ?? "");
  if (!type.startsWith("application/json")) return `error answer is not JSON (content-type "${type}")`;
  let body: unknown;
  try {
    body = JSON.parse(res.text);
  } catch {
    return "error answer does not parse as JSON";
  }
  const fields = body as Record<string, unknown> | null;
  if (
    !fields ||
    typeof fields.reqId !== "string" ||
    fields.statusCode !== res.status ||
    typeof fields.error !== "string" ||
    fields.message === undefined
  ) {
    return "error body is not {reqId, statusCode, message, error}";
  }
  return undefined;
};

export type FuzzTally = { requests: number; violations: Violation[] };

export const newTally = (): FuzzTally => ({ requests: 0, violations: [] });

/** Sends every request (a few at a time) and records what went wrong, so one run reports every kind. */
export const sendAll = async (baseUrl: string, requests: RawRequest[], tally: FuzzTally, concurrency = 4) => {
  let next = 0;
  const worker = async () => {
    while (next < requests.length) {
      const req = requests[next++]!;
      tally.requests += 1;
      try {
        const started = Date.now();
        const res = await send(baseUrl, req);
        if (TRACE) console.info(`${res.status} ${Date.now() - started}ms ${req.label} ${res.text.slice(0, 160)}`);
        const problem =
          problemWith(res) ?? (req.mustFail && res.status < 400 ? `accepted with ${res.status}` : undefined);
        if (problem) tally.violations.push({ request: req, problem, status: res.status, text: res.text.slice(0, 300) });
      } catch (error) {
        tally.violations.push({ request: req, problem: `no answer: ${(error as Error).message}` });
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
};

/** A readable account of the violations: counts by kind, then the first few requests in full. */
export const describeViolations = (violations: Violation[], shown = 8) => {
  const byProblem = new Map<string, number>();
  for (const v of violations) {
    const kind = v.problem.replace(/"[^"]*"/g, '"…"');
    byProblem.set(kind, (byProblem.get(kind) ?? 0) + 1);
  }
  const lines = [...byProblem].map(([kind, count]) => `${count} × ${kind}`);
  for (const v of violations.slice(0, shown)) {
    const body = v.request.body ? v.request.body.toString("utf8").slice(0, 2_000) : "";
    lines.push(
      `--- ${v.request.label}: ${v.problem}`,
      `${v.request.method} ${v.request.path.slice(0, 300)}`,
      ...Object.entries(v.request.headers ?? {}).map(([k, val]) => `${k}: ${val.slice(0, 120)}`),
      body ? `body: ${body}` : "",
      v.status ? `answer ${v.status}: ${v.text ?? ""}` : "",
    );
  }
  return lines.filter(Boolean).join("\n");
};
