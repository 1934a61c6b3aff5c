import type { Server } from "node:http";
import { ok } from "@keyward/client";
import {
  followProjectEvents,
  placeMatches,
  planRegistrations,
  type ChangedPlace,
  type EventStream,
} from "../events/stream";
import { TokenKeeper } from "./auth";
import { loadAgentConfig, type AgentConfig, type TemplateSpec } from "./config";
import { CommandRunner } from "./exec";
import { keepMode, readFileIfAny, writeFileAtomic } from "./files";
import { buildHealthReport, startHealthServer, type HealthReport } from "./health";
import { LeaseKeeper } from "./leases";
import { reasonOf, type Logger } from "./log";
import { RenderSession, renderTemplate, type FolderInput } from "./render";

type TemplateState = {
  spec: TemplateSpec;
  folders: Map<string, FolderInput>;
  leases: Set<string>;
  status: "pending" | "ok" | "error";
  error?: string;
  lastRenderAt?: Date;
  rendering: boolean;
  dirty: boolean;
  soon?: NodeJS.Timeout;
  pollTimer?: NodeJS.Timeout;
  etags: Map<string, string>;
  runner?: CommandRunner;
  /** Replaced by a reload (or the agent stops): it renders, polls and runs nothing more. */
  retired: boolean;
};

type ProjectStreams = { plan: string; streams: EventStream[] };

/** Changes that arrive within this window make one render. */
const COALESCE_MS = 50;
const STATUS_EVERY_MS = 60_000;

/**
 * `keyward agent`: renders templates from Keyward's secrets into files and keeps them current,
 * following each project's events stream and polling with ETags while the stream is down.
 */
export class Agent {
  private config: AgentConfig;
  private tokens: TokenKeeper;
  private readonly leases: LeaseKeeper;
  private templates: TemplateState[] = [];
  private readonly streams = new Map<string, ProjectStreams>();
  private readonly projectIds = new Map<string, string>();
  private health: Server | undefined;
  private statusTimer: NodeJS.Timeout | undefined;
  private stopping = false;
  private stopped: Promise<void> | undefined;
  private lastRenderAt: Date | undefined;

  /** Reads the config at once: a file that does not load stops the command before anything starts. */
  constructor(
    private readonly configPath: string,
    private readonly log: Logger,
  ) {
    this.config = loadAgentConfig(this.configPath);
    this.tokens = new TokenKeeper(this.config, this.log);
    this.leases = new LeaseKeeper(
      () => this.tokens.client(),
      this.log,
      this.config.leaseRenewBeforeMs,
      (key) => this.onLeaseReplaced(key),
    );
  }

  /** Infisical's `exit-after-auth`: the command ends once the first login and renders are done. */
  get exitAfterAuth() {
    return this.config.exitAfterAuth;
  }

  private logIgnored(config: AgentConfig) {
    for (const { key, reason } of config.ignored) this.log.warn("config key ignored", { key, reason });
  }

  async start() {
    this.logIgnored(this.config);
    await this.startHealth();
    this.log.info("agent starting", { url: this.config.url, templates: this.config.templates.map((t) => t.name) });
    if (!(await this.tokens.start())) return;
    this.statusTimer = setInterval(() => this.logStatus(), STATUS_EVERY_MS);
    this.statusTimer.unref();
    await this.installTemplates(this.config.templates);
    this.logStatus();
  }

  private async startHealth() {
    const health = this.config.health;
    if (!health) return;
    this.health = await startHealthServer(health.host, health.port, () => this.report());
    this.log.info("health endpoint listening", { address: `${health.host}:${health.port}` });
  }

  private async installTemplates(specs: TemplateSpec[]) {
    this.templates = specs.map((spec) => ({
      spec,
      folders: new Map(),
      leases: new Set(),
      status: "pending",
      rendering: false,
      dirty: false,
      etags: new Map(),
      runner: spec.execute && new CommandRunner(spec.name, spec.execute, this.log),
      retired: false,
    }));
    await Promise.all(this.templates.map((t) => this.render(t)));
    for (const t of this.templates) this.schedulePoll(t);
  }

  /** Render one template; a render asked for while one runs makes one more after it. */
  private async render(t: TemplateState): Promise<void> {
    if (this.stopping || t.retired) return;
    if (t.rendering) {
      t.dirty = true;
      return;
    }
    t.rendering = true;
    try {
      do {
        t.dirty = false;
        await this.renderOnce(t);
      } while (t.dirty && !this.stopping && !t.retired);
    } finally {
      t.rendering = false;
    }
    this.syncStreams();
  }

  private async renderOnce(t: TemplateState, retried = false): Promise<void> {
    const session = new RenderSession(
      () => this.tokens.client(),
      (slug) => this.projectIdOf(slug),
      (args) => this.leases.acquire(args),
    );
    let content: string;
    try {
      content = await renderTemplate(t.spec.source, session);
    } catch (error) {
      if (session.unauthorized && !retried) {
        await this.tokens.refresh().catch(() => undefined);
        return this.renderOnce(t, true);
      }
      t.status = "error";
      t.error = reasonOf(error);
      // What it read so far is still worth following: the missing secret may appear.
      for (const [key, folder] of session.folders) t.folders.set(key, folder);
      this.log.error("template failed; its file is left as it was", { template: t.spec.name, reason: t.error });
      return;
    }
    t.folders = session.folders;
    t.leases = session.leases;
    t.status = "ok";
    t.error = undefined;
    t.lastRenderAt = this.lastRenderAt = new Date();
    if (readFileIfAny(t.spec.destination) === content) {
      // Same text: nothing to write or run, but a mode changed in the config still applies.
      keepMode(t.spec.destination, t.spec.mode);
      return;
    }
    try {
      writeFileAtomic(t.spec.destination, content, t.spec.mode);
    } catch (error) {
      t.status = "error";
      t.error = `cannot write ${t.spec.destination}: ${reasonOf(error)}`;
      this.log.error("template failed; its file is left as it was", { template: t.spec.name, reason: t.error });
      return;
    }
    this.log.info("template rendered", { template: t.spec.name, destination: t.spec.destination });
    t.runner?.trigger();
  }

  private renderSoon(t: TemplateState) {
    clearTimeout(t.soon);
    t.soon = setTimeout(() => void this.render(t), COALESCE_MS);
  }

  private async projectIdOf(slug: string) {
    const known = this.projectIds.get(slug);
    if (known) return known;
    const project = await ok(this.tokens.client().projects.getBySlug({ params: { slug } }));
    this.projectIds.set(slug, project.id);
    return project.id;
  }

  private onLeaseReplaced(key: string) {
    for (const t of this.templates) if (t.leases.has(key)) this.renderSoon(t);
  }

  /** One set of streams per project, registered for the folders the templates read; replaced when those change. */
  private syncStreams() {
    if (this.stopping) return;
    const byProject = new Map<string, FolderInput[]>();
    for (const t of this.templates) {
      for (const folder of t.folders.values()) {
        byProject.set(folder.projectId, [...(byProject.get(folder.projectId) ?? []), folder]);
      }
    }
    for (const [projectId, current] of this.streams) {
      if (!byProject.has(projectId)) {
        for (const s of current.streams) s.stop();
        this.streams.delete(projectId);
      }
    }
    for (const [projectId, folders] of byProject) {
      const groups = planRegistrations(folders.map((f) => ({ environment: f.environment, path: f.path })));
      const plan = JSON.stringify(groups);
      if (this.streams.get(projectId)?.plan === plan) continue;
      for (const s of this.streams.get(projectId)?.streams ?? []) s.stop();
      this.streams.set(projectId, {
        plan,
        streams: groups.map((registrations) =>
          followProjectEvents({
            url: this.config.url,
            projectId,
            registrations,
            token: () => this.tokens.current,
            handlers: {
              onOpen: (resumed) => {
                this.log.info("events stream connected", { projectId, resumed });
                // Whatever changed between the last read and now (or while the stream was down) is read again.
                this.forProject(projectId, (t) => this.renderSoon(t));
              },
              onChange: (_event, places) => this.onChange(projectId, places),
              onResync: () => {
                this.log.warn("events stream asks for a full re-read", { projectId });
                this.forProject(projectId, (t) => this.renderSoon(t));
              },
              onDown: (reason) => this.log.warn("events stream unavailable; polling", { projectId, reason }),
              onAuthProblem: () => this.tokens.refresh(),
            },
          }),
        ),
      });
    }
  }

  private forProject(projectId: string, act: (t: TemplateState) => void) {
    for (const t of this.templates) {
      if ([...t.folders.values()].some((f) => f.projectId === projectId)) act(t);
    }
  }

  private onChange(projectId: string, places: ChangedPlace[]) {
    for (const t of this.templates) {
      const touched = [...t.folders.values()].some(
        (f) => f.projectId === projectId && places.some((p) => placeMatches(p, f.environment, f.path)),
      );
      if (touched) this.renderSoon(t);
    }
  }

  private streamConnected(projectId: string) {
    const streams = this.streams.get(projectId)?.streams ?? [];
    return streams.length > 0 && streams.every((s) => s.connected);
  }

  /**
   * The fallback: at the template's polling interval, each folder it reads whose project has no open
   * stream is listed with If-None-Match; a new ETag (or a template that failed last time) renders again.
   */
  private schedulePoll(t: TemplateState) {
    if (this.stopping || t.retired) return;
    t.pollTimer = setTimeout(() => {
      void this.poll(t).finally(() => this.schedulePoll(t));
    }, t.spec.pollingMs);
  }

  private async poll(t: TemplateState) {
    if (t.status !== "ok") return this.render(t);
    let changed = false;
    for (const [key, folder] of t.folders) {
      if (this.streamConnected(folder.projectId)) continue;
      const etag = t.etags.get(key);
      try {
        const response = await this.tokens.client().secretsV4.list({
          query: {
            projectId: folder.projectId,
            environment: folder.environment,
            secretPath: folder.path,
            includeImports: "true",
            expandSecretReferences: "true",
          },
          extraHeaders: etag ? { "if-none-match": etag } : {},
        });
        if (response.status === 304) continue;
        if (response.status === 401) await this.tokens.refresh().catch(() => undefined);
        if (response.status !== 200) continue;
        const next = response.headers.get("etag") ?? undefined;
        if (next === undefined || next !== etag) changed = true;
        if (next !== undefined) t.etags.set(key, next);
      } catch {
        // Unreachable: the next tick tries again; the file stays as it is.
      }
    }
    if (changed) await this.render(t);
  }

  private report(): HealthReport {
    const projects = [...this.streams.keys()];
    const streaming = projects.length > 0 && projects.every((p) => this.streamConnected(p));
    return buildHealthReport({ templates: this.templates, lastRenderAt: this.lastRenderAt, streaming });
  }

  private logStatus() {
    const r = this.report();
    this.log.info("status", {
      status: r.status,
      stream: r.stream,
      lastRenderAt: r.lastRenderAt,
      ok: r.templates.filter((t) => t.status === "ok").length,
      failing: r.templates.filter((t) => t.status === "error").map((t) => t.name),
    });
  }

  private stopTemplates() {
    for (const t of this.templates) {
      t.retired = true;
      clearTimeout(t.soon);
      clearTimeout(t.pollTimer);
      t.runner?.stop();
    }
    for (const { streams } of this.streams.values()) for (const s of streams) s.stop();
    this.streams.clear();
  }

  /** SIGHUP: read the config again; a config that does not load leaves everything as it was. */
  async reload() {
    let next: AgentConfig;
    try {
      next = loadAgentConfig(this.configPath);
    } catch (error) {
      this.log.error("config reload failed; keeping the running config", { reason: reasonOf(error) });
      return;
    }
    this.logIgnored(next);
    this.log.info("reloading the config", { templates: next.templates.map((t) => t.name) });
    this.stopTemplates();
    const sameLogin =
      JSON.stringify([next.url, next.auth, next.sinks]) ===
      JSON.stringify([this.config.url, this.config.auth, this.config.sinks]);
    if (!sameLogin) {
      await this.tokens.stop(this.config.revokeOnShutdown);
      const previous = this.tokens;
      this.tokens = new TokenKeeper(next, this.log);
      // A client secret removed on read by the old login is still known to the new one.
      this.tokens.credentials.inherit(previous.credentials);
      this.projectIds.clear();
      if (!(await this.tokens.start())) return;
    }
    const healthChanged = JSON.stringify(next.health) !== JSON.stringify(this.config.health);
    this.config = next;
    this.leases.renewBeforeMs = next.leaseRenewBeforeMs;
    if (healthChanged) {
      await new Promise((resolve) => (this.health ? this.health.close(resolve) : resolve(undefined)));
      this.health = undefined;
      await this.startHealth().catch((error: unknown) =>
        this.log.error("cannot start the health endpoint", { reason: reasonOf(error) }),
      );
    }
    await this.installTemplates(next.templates);
    await this.leases.releaseUnused(new Set(this.templates.flatMap((t) => [...t.leases])));
    this.logStatus();
  }

  /**
   * SIGTERM/SIGINT: stop following, revoke the leases and (when it logged in itself) the token,
   * unless `revoke-credentials-on-shutdown: false`. After `exit-after-auth` nothing is revoked: the
   * files and the sink are what the agent was run for.
   */
  stop(revoke = this.config.revokeOnShutdown): Promise<void> {
    // A second stop (a signal during exit-after-auth) waits for the first one.
    this.stopped ??= (async () => {
      this.stopping = true;
      clearInterval(this.statusTimer);
      this.stopTemplates();
      this.health?.close();
      await this.leases.stop(revoke);
      await this.tokens.stop(revoke);
      this.log.info("agent stopped", { revoked: revoke });
    })();
    return this.stopped;
  }
}
