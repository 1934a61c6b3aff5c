import type { IncomingHttpHeaders } from "node:http";
import { request, type Agent } from "node:https";

export type Json = Record<string, unknown>;
export type Answer<T> = { status: number; headers: IncomingHttpHeaders; body: T };

/**
 * JSON over HTTPS for the stand-ins' own tests, through the agent `agentOf` gives when a request is
 * made (it trusts the test CA, which exists only once the file's setup ran).
 */
export const createJsonClient = (agentOf: () => Agent) => {
  /** One HTTPS request trusting the test CA: status, headers and the parsed JSON body (undefined when empty). */
  const call = <T = Json>(
    url: string,
    init: { method?: string; headers?: Record<string, string>; body?: string } = {},
  ) =>
    new Promise<Answer<T>>((resolve, reject) => {
      const req = request(url, { method: init.method ?? "GET", agent: agentOf(), headers: init.headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: (text ? JSON.parse(text) : undefined) as T,
          });
        });
      });
      req.on("error", reject);
      req.end(init.body);
    });

  /** A form POST, as OAuth token endpoints take them. */
  const postForm = (url: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
    call(url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
      body: new URLSearchParams(fields).toString(),
    });

  /** A JSON request with a bearer token. */
  const withToken = <T = Json>(url: string, token: string, method = "GET", body?: unknown) =>
    call<T>(url, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  return { call, postForm, withToken };
};
