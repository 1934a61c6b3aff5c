import {
  createServer,
  IncomingMessage,
  ServerResponse,
  STATUS_CODES,
  type RequestListener,
  type Server,
} from "node:http";
import type { Socket } from "node:net";
import type { Env } from "../env";
import { newRequestId } from "../http/request-id";

type ServerTimeouts = Pick<Env, "HTTP_HEADERS_TIMEOUT_MS" | "HTTP_REQUEST_TIMEOUT_MS" | "HTTP_KEEP_ALIVE_TIMEOUT_MS">;

/** Errors node's HTTP parser raises before Express sees a request, and the answer each gets. */
const PARSER_ERRORS: Record<string, { status: number; error: string; message: string }> = {
  HPE_HEADER_OVERFLOW: {
    status: 431,
    error: "RequestHeaderFieldsTooLarge",
    message: "The request line and headers are larger than the server accepts",
  },
  ERR_HTTP_REQUEST_TIMEOUT: {
    status: 408,
    error: "RequestTimeout",
    message: "The request was not received in time",
  },
};
const MALFORMED = { status: 400, error: "BadRequest", message: "The request is not valid HTTP" };

/** The spec's JSON error body as a complete HTTP/1.1 response, for sockets that never reached Express. */
export const rawErrorResponse = (code: string | undefined) => {
  const { status, error, message } = (code && PARSER_ERRORS[code]) || MALFORMED;
  const reqId = newRequestId();
  const body = JSON.stringify({ reqId, statusCode: status, message, error });
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
    "Content-Type: application/json; charset=utf-8\r\n" +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    `X-Request-Id: ${reqId}\r\n` +
    "Connection: close\r\n\r\n" +
    body
  );
};

/** Node's own handler writes a body-less (or plain-text) answer; ours writes the spec's JSON body. */
const answerClientError = (error: Error & { code?: string }, socket: Socket) => {
  // A peer that reset the connection cannot be answered.
  if (error.code === "ECONNRESET" || !socket.writable) {
    socket.destroy();
    return;
  }
  // Only when no response on this socket has started: otherwise the bytes would land inside it.
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
  if (inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  socket.end(rawErrorResponse(error.code), () => socket.destroy());
  // A peer that does not read even that small answer does not keep the socket.
  setTimeout(() => socket.destroy(), 1_000).unref();
};

type ExpressLike = RequestListener & { request?: object; response?: object };

/**
 * Node's request and response classes, with Express's prototypes from the start.
 *
 * Express's init middleware gives every request and response the app's prototype with
 * `Object.setPrototypeOf`; on an object built with another prototype that is a slow reshaping, and
 * V8 then keeps each request's objects alive through young-generation collections until the next
 * full one (bare Express at 32 connections: 10k -> 18.5k req/s, 2.9 MB -> 7 KB surviving each
 * scavenge once the prototypes match). Built with the app's prototypes, Express finds nothing to change.
 *
 * They are subclasses, and the app's `request` and `response` become the subclasses' prototypes
 * (keeping Express's methods behind them), rather than plain functions that call node's: V8 sizes an
 * instance by its constructor, and a function that only forwards to node's constructor gave each
 * response a handful of in-object fields for node's ~30, so V8 turned every response into a
 * dictionary-mode object, whose every request then again outlived young-generation collections
 * (privilege read: ~2 MB promoted per scavenge, 3.5 ms pauses).
 */
const expressMessageClasses = (app: ExpressLike) => {
  if (!app.request || !app.response) return {};
  let classes = adopted.get(app);
  if (!classes) {
    classes = adoptMessageClasses(app, app.request, app.response);
    adopted.set(app, classes);
  }
  return classes;
};

const adoptMessageClasses = (app: ExpressLike, request: object, response: object) => {
  class KeywardRequest extends IncomingMessage {}
  class KeywardResponse extends ServerResponse {}
  app.request = adoptPrototype(KeywardRequest.prototype, request);
  app.response = adoptPrototype(KeywardResponse.prototype, response);
  return { IncomingMessage: KeywardRequest, ServerResponse: KeywardResponse };
};

/** Once per app: every server of one app builds its messages with the same classes (and prototypes). */
const adopted = new WeakMap<ExpressLike, ReturnType<typeof adoptMessageClasses>>();

/** `target` takes the place of `current`: the same chain behind it and the same own members (Express's `app`). */
const adoptPrototype = (target: object, current: object) => {
  Object.setPrototypeOf(target, Object.getPrototypeOf(current) as object | null);
  Object.defineProperties(target, Object.getOwnPropertyDescriptors(current));
  return target;
};

/**
 * The HTTP server every entry point uses (main.ts, the tests, the bench), so all get the same
 * timeouts and the same JSON answer to requests node's parser rejects. A client that sends its
 * headers or body slowly is cut off after the headers / request timeout, and an idle keep-alive
 * connection after the keep-alive timeout.
 */
export const createHttpServer = (app: ExpressLike, env: ServerTimeouts): Server => {
  const headersTimeout = env.HTTP_HEADERS_TIMEOUT_MS;
  const server = createServer(
    {
      ...expressMessageClasses(app),
      headersTimeout,
      requestTimeout: env.HTTP_REQUEST_TIMEOUT_MS,
      // How often node looks for connections past those timeouts (its default, 30 s, would let them linger).
      connectionsCheckingInterval: Math.max(25, Math.min(1_000, Math.floor((headersTimeout || 4_000) / 4))),
    },
    app,
  );
  server.keepAliveTimeout = env.HTTP_KEEP_ALIVE_TIMEOUT_MS;
  server.on("clientError", answerClientError);
  return server;
};
