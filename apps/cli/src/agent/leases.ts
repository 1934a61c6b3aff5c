import { isKeywardError, ok, type KeywardClient } from "@keyward/client";
import { createBackoff, sleep } from "./backoff";
import { parseDuration } from "./duration";
import { reasonOf, type Logger } from "./log";

export type LeaseArgs = { projectSlug: string; environment: string; path: string; name: string; ttl?: string };

type Held = {
  key: string;
  args: LeaseArgs;
  id: string;
  data: Record<string, string>;
  expireAt: number;
  /** The lease's life as asked (or as first granted), which each renewal asks for again. */
  lifeMs: number;
  timer?: NodeJS.Timeout;
};

export const leaseKey = (a: LeaseArgs) =>
  JSON.stringify([a.projectSlug, a.environment, a.path, a.name.toLowerCase(), a.ttl ?? ""]);

/**
 * The dynamic-secret leases the templates use, one per distinct (project, environment, path, name,
 * ttl): a template rendered again gets the same credentials. Each lease is renewed at two thirds of
 * its life (or `renewBeforeMs` before it ends, whichever is earlier); a refused renewal, or one the
 * max TTL no longer lets reach further, takes a new lease and tells the owner, which renders the
 * templates that use it again. The old lease is kept until it ends or the agent stops.
 */
export class LeaseKeeper {
  private readonly held = new Map<string, Held>();
  /** Replaced leases, revoked at shutdown if they have not ended by then. */
  private readonly retired = new Map<string, Held>();
  private readonly creating = new Map<string, Promise<Held>>();
  private stopped = false;
  private readonly stopper = new AbortController();

  constructor(
    private readonly client: () => KeywardClient,
    private readonly log: Logger,
    /** Changed by a config reload; used from the next renewal on. */
    public renewBeforeMs: number,
    private readonly onReplaced: (key: string) => void,
  ) {}

  async acquire(args: LeaseArgs): Promise<Record<string, string>> {
    const key = leaseKey(args);
    const existing = this.held.get(key);
    if (existing && existing.expireAt > Date.now() + 1000) return existing.data;
    // Templates rendered together that ask for the same lease share one request, and so one lease.
    let creating = this.creating.get(key);
    if (!creating) {
      creating = this.create(key, args).finally(() => this.creating.delete(key));
      this.creating.set(key, creating);
    }
    return (await creating).data;
  }

  private async create(key: string, args: LeaseArgs) {
    const body = await ok(
      this.client().dynamicSecretLeases.create({
        body: {
          dynamicSecretName: args.name,
          projectSlug: args.projectSlug,
          environmentSlug: args.environment,
          path: args.path,
          ttl: args.ttl,
        },
      }),
    );
    const expireAt = Date.parse(body.lease.expireAt);
    const asked = args.ttl === undefined ? undefined : parseDuration(args.ttl);
    const held: Held = {
      key,
      args,
      id: body.lease.id,
      data: body.data,
      expireAt,
      lifeMs: asked ?? Math.max(expireAt - Date.now(), 1000),
    };
    const previous = this.held.get(key);
    if (previous) this.retire(previous);
    this.held.set(key, held);
    this.log.info("lease taken", { lease: held.id, dynamicSecret: args.name, expireAt: body.lease.expireAt });
    this.schedule(held);
    return held;
  }

  private retire(lease: Held) {
    clearTimeout(lease.timer);
    this.retired.set(lease.id, lease);
    const left = lease.expireAt - Date.now();
    // It ends by itself; forget it then.
    lease.timer = setTimeout(() => this.retired.delete(lease.id), Math.max(left, 0));
  }

  private schedule(lease: Held) {
    clearTimeout(lease.timer);
    if (this.stopped) return;
    const margin = Math.max(this.renewBeforeMs, lease.lifeMs / 3);
    const wait = Math.max(lease.expireAt - margin - Date.now(), 0);
    lease.timer = setTimeout(() => void this.renew(lease), wait);
  }

  private async renew(lease: Held) {
    const backoff = createBackoff();
    while (!this.stopped && this.held.get(lease.key) === lease) {
      try {
        const { lease: renewed } = await ok(
          this.client().dynamicSecretLeases.renew({
            params: { leaseId: lease.id },
            body: {
              projectSlug: lease.args.projectSlug,
              environmentSlug: lease.args.environment,
              path: lease.args.path,
              ttl: lease.args.ttl,
            },
          }),
        );
        const expireAt = Date.parse(renewed.expireAt);
        if (expireAt <= lease.expireAt) throw new MaxTtlReached();
        lease.expireAt = expireAt;
        this.log.info("lease renewed", { lease: lease.id, expireAt: renewed.expireAt });
        this.schedule(lease);
        return;
      } catch (error) {
        const refused =
          error instanceof MaxTtlReached || (isKeywardError(error) && error.status >= 400 && error.status < 500);
        if (refused) return this.replace(lease, reasonOf(error));
        if (lease.expireAt <= Date.now()) return this.replace(lease, "the lease ended while Keyward was unreachable");
        const delay = Math.min(backoff.next(), Math.max(lease.expireAt - Date.now(), 1000));
        this.log.error("lease renewal failed; retrying", {
          lease: lease.id,
          reason: reasonOf(error),
          retryInMs: delay,
        });
        await sleep(delay, this.stopper.signal);
      }
    }
  }

  private async replace(lease: Held, reason: string) {
    this.log.warn("lease cannot be renewed; taking a new one", { lease: lease.id, reason });
    const backoff = createBackoff();
    while (!this.stopped && this.held.get(lease.key) === lease) {
      try {
        await this.create(lease.key, lease.args);
        this.onReplaced(lease.key);
        return;
      } catch (error) {
        const delay = backoff.next();
        this.log.error("cannot take a new lease; retrying", {
          dynamicSecret: lease.args.name,
          reason: reasonOf(error),
          retryInMs: delay,
        });
        await sleep(delay, this.stopper.signal);
      }
    }
  }

  /** Revoke the leases no template uses any more (after a config reload). */
  async releaseUnused(used: Set<string>) {
    for (const lease of [...this.held.values()]) {
      if (used.has(lease.key)) continue;
      this.held.delete(lease.key);
      clearTimeout(lease.timer);
      await this.revoke(lease);
    }
  }

  private async revoke(lease: Held) {
    try {
      await ok(
        this.client().dynamicSecretLeases.delete({
          params: { leaseId: lease.id },
          body: {
            projectSlug: lease.args.projectSlug,
            environmentSlug: lease.args.environment,
            path: lease.args.path,
            isForced: false,
          },
        }),
      );
      this.log.info("lease revoked", { lease: lease.id });
    } catch (error) {
      this.log.error("cannot revoke a lease", { lease: lease.id, reason: reasonOf(error) });
    }
  }

  /** Stop renewing and revoke every lease still held (replaced ones too, unless they have ended). */
  /** Stop renewing; revoke every lease still held unless `revoke` is false (left to end by themselves). */
  async stop(revoke = true) {
    this.stopped = true;
    this.stopper.abort();
    const all = [...this.held.values(), ...this.retired.values()];
    this.held.clear();
    this.retired.clear();
    for (const lease of all) clearTimeout(lease.timer);
    if (!revoke) return;
    await Promise.all(all.filter((l) => l.expireAt > Date.now()).map((l) => this.revoke(l)));
  }
}

class MaxTtlReached extends Error {
  constructor() {
    super("the lease's max TTL lets it go no further");
  }
}
