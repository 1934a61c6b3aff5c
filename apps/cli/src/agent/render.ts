import { isKeywardError, ok, type KeywardClient } from "@keyward/client";
import {
  Liquid,
  Tag,
  Tokenizer,
  evalToken,
  type Context,
  type Emitter,
  type TagToken,
  type TopLevelToken,
} from "liquidjs";
import type { ValueToken } from "liquidjs";
import { formatSecrets } from "../output";
import { leaseKey, type LeaseArgs } from "./leases";

/** A folder a template read: what the events stream and the polling fallback watch for it. */
export type FolderInput = { projectId: string; environment: string; path: string };
export const folderKey = (f: FolderInput) => JSON.stringify([f.projectId, f.environment, f.path]);

export type SecretItem = { key: string; value: string; secretKey: string; secretValue: string };

/** What one render reads from Keyward; it remembers every folder and lease it touched. */
export class RenderSession {
  readonly folders = new Map<string, FolderInput>();
  readonly leases = new Set<string>();
  /** Whether Keyward answered 401 to a read: the token needs renewing before the next try. */
  unauthorized = false;

  constructor(
    private readonly client: () => KeywardClient,
    private readonly projectIdOf: (slug: string) => Promise<string>,
    private readonly acquireLease: (args: LeaseArgs) => Promise<Record<string, string>>,
  ) {}

  private note(folder: FolderInput) {
    this.folders.set(folderKey(folder), folder);
  }

  async getSecret(projectId: string, environment: string, path: string, name: string) {
    this.note({ projectId, environment, path });
    try {
      const { secret } = await ok(
        this.client().secretsV4.get({
          params: { secretName: name },
          query: {
            projectId,
            environment,
            secretPath: path,
            type: "shared",
            expandSecretReferences: "true",
            includeImports: "true",
          },
        }),
      );
      return secret.secretValue;
    } catch (error) {
      if (isKeywardError(error) && error.status === 404) {
        throw new Error(`secret ${name} not found in ${path} of environment '${environment}' (project ${projectId})`);
      }
      throw this.describe(error, `reading secret ${name} in ${path} of '${environment}'`);
    }
  }

  /** The folder's secrets with imports merged under them (later imports win over earlier) and references expanded. */
  async listSecrets(projectId: string, environment: string, path: string): Promise<SecretItem[]> {
    this.note({ projectId, environment, path });
    let body;
    try {
      body = await ok(
        this.client().secretsV4.list({
          query: {
            projectId,
            environment,
            secretPath: path,
            includeImports: "true",
            expandSecretReferences: "true",
          },
        }),
      );
    } catch (error) {
      throw this.describe(error, `listing ${path} of '${environment}'`);
    }
    const merged = new Map<string, string>();
    for (const imported of body.imports) for (const s of imported.secrets) merged.set(s.secretKey, s.secretValue);
    for (const s of body.secrets) merged.set(s.secretKey, s.secretValue);
    return [...merged].map(([key, value]) => ({ key, value, secretKey: key, secretValue: value }));
  }

  async listSecretsByProjectSlug(slug: string, environment: string, path: string) {
    let projectId: string;
    try {
      projectId = await this.projectIdOf(slug);
    } catch (error) {
      throw this.describe(error, `finding project ${slug}`);
    }
    return this.listSecrets(projectId, environment, path);
  }

  /** An error that says what was being done and the server's status and message (never a value). */
  private describe(error: unknown, doing: string) {
    if (isKeywardError(error)) {
      if (error.status === 401) this.unauthorized = true;
      return new Error(`${doing}: ${error.status === 0 ? "" : `${error.status} `}${error.message}`);
    }
    return new Error(`${doing}: ${error instanceof Error ? error.message : String(error)}`);
  }

  async dynamicSecret(args: LeaseArgs) {
    this.leases.add(leaseKey(args));
    try {
      return await this.acquireLease(args);
    } catch (error) {
      throw this.describe(error, `leasing dynamic secret ${args.name} in ${args.path} of '${args.environment}'`);
    }
  }
}

type TagCall = (session: RenderSession, args: string[]) => Promise<unknown>;

const asText = (value: unknown) => {
  if (typeof value === "string") return value;
  if (Array.isArray(value))
    return formatSecrets(Object.fromEntries(value.map((s: SecretItem) => [s.key, s.value])), "dotenv");
  return formatSecrets(value as Record<string, string>, "dotenv");
};

/**
 * A tag taking quoted strings or variables, optionally ending in `as name`: with it the result is
 * assigned to `name`, without it the result is written out (a value as it is, a list as dotenv lines).
 */
const defineTag = (arity: [number, number], call: TagCall, session: RenderSession) =>
  class extends Tag {
    private readonly values: ValueToken[] = [];
    private readonly target: string | undefined;

    constructor(token: TagToken, remain: TopLevelToken[], liquid: Liquid) {
      super(token, remain, liquid);
      const match = /^(.*?)\s+as\s+([A-Za-z_][\w-]*)\s*$/s.exec(token.args);
      this.target = match?.[2];
      const tokenizer = new Tokenizer(match ? match[1]! : token.args);
      for (;;) {
        tokenizer.skipBlank();
        if (tokenizer.end()) break;
        const value = tokenizer.readValue();
        if (!value) throw new Error(`${token.name}: cannot read the arguments "${token.args}"`);
        this.values.push(value);
      }
      const [min, max] = arity;
      if (this.values.length < min || this.values.length > max) {
        throw new Error(
          `${token.name} takes ${min === max ? min : `${min} to ${max}`} arguments, got ${this.values.length}`,
        );
      }
    }

    *render(ctx: Context, emitter: Emitter): Generator<unknown, void, unknown> {
      const args: string[] = [];
      for (const value of this.values) args.push(String(yield evalToken(value, ctx)));
      const result: unknown = yield call(session, args);
      if (this.target) ctx.bottom()[this.target] = result;
      else emitter.write(asText(result));
    }
  };

/**
 * The template language: Liquid (liquidjs), which evaluates expressions but never runs code, with
 * includes served from an empty in-memory set so a template cannot read files.
 */
export const renderTemplate = async (source: string, session: RenderSession) => {
  const liquid = new Liquid({ templates: {}, strictFilters: true });
  const secret: TagCall = (s, [p, e, path, name]) => s.getSecret(p!, e!, path!, name!);
  const list: TagCall = (s, [p, e, path]) => s.listSecrets(p!, e!, path!);
  const bySlug: TagCall = (s, [slug, e, path]) => s.listSecretsByProjectSlug(slug!, e!, path!);
  const dynamic: TagCall = (s, [slug, e, path, name, ttl]) =>
    s.dynamicSecret({ projectSlug: slug!, environment: e!, path: path!, name: name!, ttl: ttl || undefined });
  const tags: [string, [number, number], TagCall][] = [
    ["getSecretByName", [4, 4], secret],
    ["secret", [4, 4], secret],
    ["listSecrets", [3, 3], list],
    ["secrets", [3, 3], list],
    ["listSecretsByProjectSlug", [3, 3], bySlug],
    ["dynamicSecret", [4, 5], dynamic],
    ["dynamic_secret", [4, 5], dynamic],
  ];
  for (const [name, arity, call] of tags) liquid.registerTag(name, defineTag(arity, call, session));
  return (await liquid.parseAndRender(source, {})) as string;
};
