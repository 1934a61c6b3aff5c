import { createKeywardClient, isKeywardError, ok, type KeywardClient } from "@keyward/client";
import type { AgentConfig } from "./config";
import { CredentialReader, logIn } from "./logins";
import { createBackoff, sleep } from "./backoff";
import { writeFileAtomic } from "./files";
import { reasonOf, type Logger } from "./log";

/** A new login this long before the max TTL ends, so the token never lapses between two calls. */
const MAX_TTL_MARGIN_MS = 5_000;

/**
 * The agent's access token: logs in (universal auth) or takes the given token, writes it to the
 * sinks, renews it at two thirds of its TTL and logs in again when a renewal would pass its max TTL
 * or is refused. While Keyward cannot be reached it retries with capped backoff.
 */
export class TokenKeeper {
  private token: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private refreshing: Promise<void> | undefined;
  /** When the token can no longer be renewed (ms since the epoch); undefined without a max TTL. */
  private maxExpiry: number | undefined;
  private readonly stopper = new AbortController();
  /** Credentials read from files at each login; a file removed on read is remembered. */
  readonly credentials = new CredentialReader();

  constructor(
    private readonly config: Pick<AgentConfig, "url" | "auth" | "sinks">,
    private readonly log: Logger,
  ) {}

  get current() {
    if (!this.token) throw new Error("not logged in yet");
    return this.token;
  }

  /** Whether this agent obtained the token by logging in (and so revokes it when it stops). */
  get ownsToken() {
    return this.config.auth.type !== "token";
  }

  client(): KeywardClient {
    return createKeywardClient({ baseUrl: this.config.url, token: this.current });
  }

  /** Until a first token is in hand (retrying while Keyward is down or refuses); false when stopped first. */
  async start(): Promise<boolean> {
    const backoff = createBackoff();
    while (!this.stopped) {
      try {
        await this.obtain();
        return true;
      } catch (error) {
        const delay = backoff.next();
        this.log.error("login failed; retrying", { reason: reasonOf(error), retryInMs: delay });
        await sleep(delay, this.stopper.signal);
      }
    }
    return false;
  }

  /** After a 401 or a stream's `error` event: renew, or log in again. Concurrent callers share one attempt. */
  refresh(): Promise<void> {
    this.refreshing ??= (async () => {
      try {
        await this.renewOrLogin();
      } finally {
        this.refreshing = undefined;
      }
    })();
    return this.refreshing;
  }

  private async obtain() {
    const anonymous = createKeywardClient({ baseUrl: this.config.url });
    const auth = this.config.auth;
    if (auth.type !== "token") {
      const login = await logIn(anonymous, auth, this.credentials);
      this.accept(login.accessToken, login.expiresIn, login.accessTokenMaxTTL);
      this.log.info(`logged in with ${auth.type === "universal-auth" ? "universal auth" : auth.type}`, {
        method: auth.type,
        expiresInS: login.expiresIn,
      });
      return;
    }
    const token = this.credentials.read(auth.token, "token", false);
    const self = await ok(createKeywardClient({ baseUrl: this.config.url, token }).accessTokens.self());
    const expiresIn = self.token.expiresAt ? (Date.parse(self.token.expiresAt) - Date.now()) / 1000 : 0;
    const maxLeft = self.token.maxExpiresAt ? (Date.parse(self.token.maxExpiresAt) - Date.now()) / 1000 : 0;
    this.accept(token, Math.max(0, Math.floor(expiresIn)), Math.max(0, Math.floor(maxLeft)));
    this.log.info("using the configured access token", { identity: self.identity.name });
  }

  private accept(token: string, expiresInS: number, maxTtlS: number) {
    const changed = token !== this.token;
    this.token = token;
    if (changed) this.maxExpiry = maxTtlS > 0 ? Date.now() + maxTtlS * 1000 : undefined;
    if (changed) this.writeSinks();
    this.schedule(expiresInS);
  }

  private writeSinks() {
    for (const path of this.config.sinks) {
      try {
        writeFileAtomic(path, this.current, 0o600);
      } catch (error) {
        this.log.error("cannot write the token sink", { path, reason: reasonOf(error) });
      }
    }
  }

  /** Renew at two thirds of the TTL; a token without TTL is never renewed. */
  private schedule(expiresInS: number) {
    clearTimeout(this.timer);
    if (this.stopped || expiresInS <= 0) return;
    this.timer = setTimeout(() => void this.renewLoop(), (expiresInS * 1000 * 2) / 3);
  }

  private async renewLoop() {
    const backoff = createBackoff();
    while (!this.stopped) {
      try {
        await this.renewOrLogin();
        return;
      } catch (error) {
        const delay = backoff.next();
        this.log.error("token renewal failed; retrying", { reason: reasonOf(error), retryInMs: delay });
        await sleep(delay, this.stopper.signal);
      }
    }
  }

  private async renewOrLogin() {
    const canLogin = this.config.auth.type !== "token";
    const pastMax = this.maxExpiry !== undefined && Date.now() >= this.maxExpiry - MAX_TTL_MARGIN_MS;
    if (pastMax && canLogin) return this.obtain();
    try {
      const anonymous = createKeywardClient({ baseUrl: this.config.url });
      const renewed = await ok(anonymous.accessTokens.renew({ body: { accessToken: this.current } }));
      this.accept(renewed.accessToken, renewed.expiresIn, renewed.accessTokenMaxTTL);
      this.log.info("access token renewed", { expiresInS: renewed.expiresIn });
    } catch (error) {
      // A refused renewal (past its max TTL, revoked) needs a new login; an unreachable server does not.
      if (canLogin && isKeywardError(error) && error.status >= 400 && error.status < 500) return this.obtain();
      throw error;
    }
  }

  /** Stop renewing; revoke the token when this agent logged in for it. */
  async stop(revoke: boolean) {
    this.stopped = true;
    this.stopper.abort();
    clearTimeout(this.timer);
    if (!revoke || !this.ownsToken || !this.token) return;
    try {
      await ok(
        createKeywardClient({ baseUrl: this.config.url }).accessTokens.revoke({ body: { accessToken: this.token } }),
      );
      this.log.info("access token revoked");
    } catch (error) {
      this.log.error("cannot revoke the access token", { reason: reasonOf(error) });
    }
  }
}
