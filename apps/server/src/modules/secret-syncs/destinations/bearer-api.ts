import type { AppDeps } from "../../../context";
import { withHttp } from "../../connectors/http";
import { DestinationError } from "./errors";

/** A whole run against one REST API (one request per secret written). */
const RUN_DEADLINE_MS = 300_000;

export type ApiAnswer = { status: number; json: () => Record<string, unknown> };
export type ApiCall = (request: { method?: string; path: string; body?: unknown }) => Promise<ApiAnswer>;

/**
 * Calls to one REST API with a bearer token, under the outbound rule (ALLOW_PRIVATE_OUTBOUND, pinned
 * address, OUTBOUND_EXTRA_CA_FILE); `path` is relative to `baseUrl`. The token never appears in an error.
 */
export const withBearerApi = <T>(deps: AppDeps, baseUrl: string, token: string, work: (call: ApiCall) => Promise<T>) =>
  withHttp(
    { outbound: deps.env.ALLOW_PRIVATE_OUTBOUND, deadlineMs: RUN_DEADLINE_MS, secrets: [token] },
    { url: baseUrl, ca: deps.outboundCa, schemes: ["https:"] },
    (call) =>
      work(async ({ method = "GET", path, body }) => {
        const answer = await call({
          method,
          path,
          headers: {
            authorization: `Bearer ${token}`,
            accept: "application/json",
            ...(body === undefined ? {} : { "content-type": "application/json" }),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          maxBytes: 8 * 1_048_576,
        });
        return {
          status: answer.status,
          json: () => {
            try {
              const parsed = JSON.parse(answer.body) as unknown;
              return parsed && typeof parsed === "object" ? (parsed as Record<string, unknown>) : {};
            } catch {
              return {};
            }
          },
        };
      }),
  );

/** A refused call as a DestinationError: the operation, the key, the HTTP status and the service's error code. */
export const apiFailure = (operation: string, key: string | undefined, answer: ApiAnswer) => {
  const error = answer.json().error as { status?: unknown; code?: unknown } | string | undefined;
  const named = typeof error === "object" && error !== null ? (error.status ?? error.code) : error;
  const code = typeof named === "string" || typeof named === "number" ? String(named) : "";
  return new DestinationError(operation, key, `HTTP ${answer.status}${code ? ` ${code}` : ""}`);
};
