import { spawn } from "node:child_process";
import { randomBytes, timingSafeEqual } from "node:crypto";
import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createInterface } from "node:readline";
import { call, connectTo } from "./api";
import { CliError, writeProfile } from "./config";
import { cliEnv } from "./env";

/** What the console hands the command line: a session of its own (the field names are Infisical's). */
export type Handoff = { email: string; accessToken: string; refreshToken: string; state?: string };

const MAX_BODY_BYTES = 64 * 1024;

/** The console's JSON, `{email, privateKey, JTWToken, RefreshToken, state}`; undefined when it is not that. */
export const parseHandoff = (value: unknown): Handoff | undefined => {
  if (typeof value !== "object" || value === null) return undefined;
  const v = value as Record<string, unknown>;
  if (typeof v.JTWToken !== "string" || v.JTWToken === "") return undefined;
  if (typeof v.RefreshToken !== "string" || v.RefreshToken === "") return undefined;
  return {
    email: typeof v.email === "string" ? v.email : "",
    accessToken: v.JTWToken,
    refreshToken: v.RefreshToken,
    state: typeof v.state === "string" ? v.state : undefined,
  };
};

const sameText = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

const readBody = async (req: IncomingMessage) => {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
};

/**
 * The loopback listener the console's `/login/cli` page posts the session to: on 127.0.0.1 at a
 * port the OS picks, answering CORS only for the Keyward server's own origin, accepting exactly
 * one POST / whose `state` is this login's one-time state; then it closes.
 */
export const startLoopbackListener = async (serverUrl: string, state: string, timeoutMs: number) => {
  const allowedOrigin = new URL(serverUrl).origin;
  let settle: { resolve: (h: Handoff) => void; reject: (e: Error) => void } | undefined;
  const received = new Promise<Handoff>((resolve, reject) => (settle = { resolve, reject }));
  let accepted = false;

  const answer = (res: ServerResponse, status: number, headers: Record<string, string>, body?: object) => {
    res.writeHead(status, {
      ...headers,
      ...(body ? { "content-type": "application/json" } : {}),
      "cache-control": "no-store",
    });
    res.end(body ? JSON.stringify(body) : undefined);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const origin = req.headers.origin;
    const fromConsole = origin === allowedOrigin;
    const cors: Record<string, string> = fromConsole
      ? { "access-control-allow-origin": allowedOrigin, vary: "Origin" }
      : { vary: "Origin" };
    if ((req.url ?? "").split("?")[0] !== "/") return answer(res, 404, cors, { error: "Not found" });
    if (req.method === "OPTIONS") {
      if (!fromConsole) return answer(res, 403, { vary: "Origin" });
      return answer(res, 204, {
        ...cors,
        "access-control-allow-methods": "POST, OPTIONS",
        "access-control-allow-headers": "Content-Type",
        "access-control-max-age": "600",
        // A public console reaching a loopback address (Chrome's Private Network Access).
        ...(req.headers["access-control-request-private-network"] === "true"
          ? { "access-control-allow-private-network": "true" }
          : {}),
      });
    }
    if (req.method !== "POST") return answer(res, 405, { ...cors, allow: "POST, OPTIONS" }, { error: "Use POST" });
    // A browser page of another site is refused; a client that sends no Origin must still know the state.
    if (origin !== undefined && !fromConsole) return answer(res, 403, { vary: "Origin" }, { error: "Wrong origin" });
    const text = await readBody(req);
    if (text === undefined) return answer(res, 413, cors, { error: "Too large" });
    let handoff: Handoff | undefined;
    try {
      handoff = parseHandoff(JSON.parse(text));
    } catch {
      handoff = undefined;
    }
    if (!handoff) return answer(res, 400, cors, { error: "Expected JSON with JTWToken and RefreshToken" });
    if (handoff.state === undefined || !sameText(handoff.state, state)) {
      return answer(res, 400, cors, { error: "Wrong or missing state: this is not the sign-in this keyward began" });
    }
    if (accepted) return answer(res, 409, cors, { error: "Already signed in" });
    accepted = true;
    answer(res, 200, cors, { message: "Signed in: you can close this page and return to the terminal" });
    settle?.resolve(handoff);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) answer(res, 500, {}, { error: "Internal error" });
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;

  const seconds = Math.round(timeoutMs / 1000);
  const waited = seconds % 60 === 0 ? `${seconds / 60} minute${seconds === 60 ? "" : "s"}` : `${seconds} s`;
  const timer = setTimeout(
    () =>
      settle?.reject(
        new CliError(
          `Timed out after ${waited} waiting for the browser sign-in; ` +
            "run `keyward login` again, or `keyward login --no-browser` to paste a code instead",
        ),
      ),
    timeoutMs,
  );
  const close = () => {
    clearTimeout(timer);
    server.close();
    // Let the answer to the accepted POST go out, then drop any connection the browser keeps open.
    setImmediate(() => server.closeAllConnections());
  };
  return { port, received: received.finally(close), close };
};

/** Open the URL in the person's browser: KEYWARD_BROWSER (a program, or "none"), else the platform's opener. */
export const openBrowser = (url: string) => {
  const choice = cliEnv().browser;
  if (choice === "none") return;
  const [command, args] =
    choice !== undefined
      ? [choice, [url]]
      : process.platform === "darwin"
        ? ["open", [url]]
        : process.platform === "win32"
          ? ["rundll32", ["url.dll,FileProtocolHandler", url]]
          : ["xdg-open", [url]];
  try {
    const child = spawn(command, args, { stdio: "ignore", detached: true });
    child.on("error", () => undefined);
    child.unref();
  } catch {
    // No browser here: the printed URL is enough.
  }
};

/** Lines from stdin, one at a time, each after its question on stderr; undefined once stdin ends. */
export const prompter = () => {
  let lines: AsyncIterator<string> | undefined;
  let rl: ReturnType<typeof createInterface> | undefined;
  return {
    ask: async (question: string) => {
      if (!rl) {
        rl = createInterface({ input: process.stdin, terminal: false });
        lines = rl[Symbol.asyncIterator]();
      }
      process.stderr.write(question);
      const next = await lines!.next();
      return next.done ? undefined : next.value.trim();
    },
    close: () => rl?.close(),
  };
};

/** The code the console shows for pasting: base64 of the same JSON it posts to the listener. */
export const decodePastedCode = (code: string): Handoff => {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(code.replace(/\s+/g, ""), "base64").toString("utf8"));
  } catch {
    value = undefined;
  }
  const handoff = parseHandoff(value);
  if (!handoff) throw new CliError("That is not a sign-in code from the Keyward console; copy it again");
  return handoff;
};

const ORG_SLUG = /^[a-z0-9][a-z0-9-]{0,63}$/i;

/**
 * `keyward login` for a person: single sign-on in the browser, which hands a session of its own
 * to this process (or, with --no-browser, a code to paste); the token is checked before it is stored.
 */
export const loginAsPerson = async (url: string, opts: { org?: string; browser: boolean }) => {
  const base = url.replace(/\/+$/, "");
  const prompt = prompter();
  try {
    const org = opts.org ?? (await prompt.ask("Organization slug: "));
    if (!org) throw new CliError("Give the organization's slug with --org <slug>");
    if (!ORG_SLUG.test(org)) throw new CliError(`'${org}' is not an organization slug`);

    let handoff: Handoff;
    if (opts.browser) {
      const state = randomBytes(24).toString("base64url");
      const listener = await startLoopbackListener(base, state, cliEnv().loginTimeoutSeconds * 1000);
      const signIn =
        `${base}/api/v1/sso/oidc/login?orgSlug=${encodeURIComponent(org)}` +
        `&callbackPort=${listener.port}&callbackState=${state}`;
      process.stderr.write(`Sign in with your browser at:\n\n  ${signIn}\n\nWaiting for the browser…\n`);
      openBrowser(signIn);
      handoff = await listener.received;
    } else {
      process.stderr.write(
        `Open this address in a browser, sign in, and copy the code it shows:\n\n  ${base}/login/cli?org=${encodeURIComponent(org)}\n\n`,
      );
      const code = await prompt.ask("Code: ");
      if (!code) throw new CliError("No code was pasted");
      handoff = decodePastedCode(code);
    }

    const api = connectTo(base, handoff.accessToken);
    await call(api, (client) => client.sessions.checkAuth());
    const { user } = await call(api, (client) => client.users.me());
    writeProfile({
      url: base,
      token: handoff.accessToken,
      refreshToken: handoff.refreshToken,
      method: "user",
      email: user.email,
      organization: org,
      loggedInAt: new Date().toISOString(),
    });
    process.stderr.write(`Logged in as ${user.email}\n`);
  } finally {
    prompt.close();
  }
};
