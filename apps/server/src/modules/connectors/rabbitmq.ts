import { withHttp, type HttpCall } from "./http";
import type { Reach } from "./rules";

/** A RabbitMQ management API (`http(s)://host:port/`) and the user to call it as. */
export type RabbitMqTarget = { url: string; username: string; password: string; ca?: string };

export type RabbitMqApi = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: string }>;

const MAX_ANSWER_BYTES = 8 * 1_048_576;

const apiOf =
  (target: RabbitMqTarget, call: HttpCall): RabbitMqApi =>
  (method, path, body) =>
    call({
      method,
      path: `/api/${path}`,
      headers: {
        authorization: `Basic ${Buffer.from(`${target.username}:${target.password}`).toString("base64")}`,
        accept: "application/json",
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      maxBytes: MAX_ANSWER_BYTES,
    });

/** Management API calls with basic authentication, under the connectors' rules (see http.ts). */
export const withRabbitMq = <T>(reach: Reach, target: RabbitMqTarget, work: (api: RabbitMqApi) => Promise<T>) =>
  withHttp(
    { ...reach, secrets: [target.password, ...(reach.secrets ?? [])] },
    { url: target.url, ca: target.ca },
    (call) => work(apiOf(target, call)),
  );
