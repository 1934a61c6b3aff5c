import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { parse } from "yaml";
import { z } from "zod";
import { CliError } from "../config";
import { parseDuration } from "./duration";

const duration = (fallbackMs: number) =>
  z
    .union([z.string(), z.number()])
    .optional()
    .transform((value, ctx) => {
      if (value === undefined) return fallbackMs;
      const ms = parseDuration(value);
      if (ms === undefined) {
        ctx.addIssue({ code: z.ZodIssueCode.custom, message: `not a duration: ${String(value)} (e.g. 30s, 5m, 1h)` });
        return z.NEVER;
      }
      return ms;
    });

const text = z.string().trim().min(1);

const UniversalAuth = z.object({
  type: z.literal("universal-auth"),
  config: z
    .object({
      "client-id": text.optional(),
      "client-id-file": text.optional(),
      "client-secret": text.optional(),
      "client-secret-file": text.optional(),
    })
    .strict()
    .refine((c) => c["client-id"] || c["client-id-file"], "give client-id or client-id-file")
    .refine((c) => c["client-secret"] || c["client-secret-file"], "give client-secret or client-secret-file"),
});

const TokenAuth = z.object({
  type: z.literal("token"),
  config: z
    .object({ token: text.optional(), "token-file": text.optional() })
    .strict()
    .refine((c) => c.token || c["token-file"], "give token or token-file"),
});

const Execute = z
  .object({
    command: text,
    timeout: duration(30_000),
    /** Run the command through /bin/sh -c (pipes, variables); otherwise it is split into argv. */
    shell: z.boolean().default(false),
  })
  .strict();

const Template = z
  .object({
    name: text.optional(),
    "source-path": text.optional(),
    "template-content": z.string().optional(),
    "destination-path": text,
    config: z
      .object({
        "polling-interval": duration(300_000),
        /** File mode as an octal string ("0640") or number; 0600 by default. */
        "file-mode": z.union([z.string().regex(/^0?[0-7]{3}$/), z.number().int()]).optional(),
        execute: Execute.optional(),
      })
      .strict()
      .default({}),
  })
  .strict()
  .refine((t) => (t["source-path"] === undefined) !== (t["template-content"] === undefined), {
    message: "give exactly one of source-path and template-content",
  });

const Server = z.object({ address: z.string().url() }).passthrough();

export const AgentConfigSchema = z
  .object({
    keyward: Server.optional(),
    /** Infisical's agent names the section `infisical`; the same file works here. */
    infisical: Server.optional(),
    auth: z.discriminatedUnion("type", [UniversalAuth, TokenAuth]),
    sinks: z
      .array(z.object({ type: z.literal("file"), config: z.object({ path: text }).strict() }).strict())
      .default([]),
    templates: z.array(Template).min(1),
    leases: z
      .object({ "renew-before": duration(0) })
      .strict()
      .default({}),
    health: z
      .object({ address: z.string().regex(/^[^:]+:\d+$/, "host:port, e.g. 127.0.0.1:8125") })
      .strict()
      .optional(),
  })
  .passthrough()
  .refine((c) => c.keyward ?? c.infisical, "give the server's address under keyward: (or infisical:)");

export type TemplateSpec = {
  /** For the log and the health report. */
  name: string;
  source: string;
  destination: string;
  pollingMs: number;
  mode: number;
  execute?: { command: string; timeoutMs: number; shell: boolean };
};

export type AgentConfig = {
  url: string;
  auth:
    | { type: "universal-auth"; clientId: string; clientSecret: string }
    | { type: "token"; token: string; tokenFile?: string };
  sinks: string[];
  templates: TemplateSpec[];
  leaseRenewBeforeMs: number;
  health?: { host: string; port: number };
};

const readSecretFile = (path: string, what: string) => {
  try {
    return readFileSync(path, "utf8").trim();
  } catch (error) {
    throw new CliError(`Cannot read ${what} from ${path}: ${(error as Error).message}`);
  }
};

const modeOf = (mode: string | number | undefined) =>
  mode === undefined ? 0o600 : typeof mode === "number" ? mode : parseInt(mode, 8);

/** Read and check the agent's YAML file; relative paths in it are taken from the file's folder. */
export const loadAgentConfig = (file: string): AgentConfig => {
  let raw: unknown;
  try {
    raw = parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new CliError(`Cannot read the agent config ${file}: ${(error as Error).message}`);
  }
  const parsed = AgentConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "(file)"}: ${i.message}`).join("; ");
    throw new CliError(`The agent config ${file} is not valid: ${issues}`);
  }
  const c = parsed.data;
  const base = dirname(resolve(file));
  const at = (path: string) => resolve(base, path);
  const auth: AgentConfig["auth"] =
    c.auth.type === "universal-auth"
      ? {
          type: "universal-auth",
          clientId: c.auth.config["client-id"] ?? readSecretFile(at(c.auth.config["client-id-file"]!), "client-id"),
          clientSecret:
            c.auth.config["client-secret"] ?? readSecretFile(at(c.auth.config["client-secret-file"]!), "client-secret"),
        }
      : {
          type: "token",
          token: c.auth.config.token ?? readSecretFile(at(c.auth.config["token-file"]!), "token"),
        };
  const templates = c.templates.map((t, index): TemplateSpec => {
    const source =
      t["template-content"] ??
      (() => {
        try {
          return readFileSync(at(t["source-path"]!), "utf8");
        } catch (error) {
          throw new CliError(`templates[${index}]: cannot read ${t["source-path"]}: ${(error as Error).message}`);
        }
      })();
    const execute = t.config.execute;
    return {
      name: t.name ?? t["destination-path"],
      source,
      destination: at(t["destination-path"]),
      pollingMs: Math.max(t.config["polling-interval"], 1000),
      mode: modeOf(t.config["file-mode"]),
      execute: execute && { command: execute.command, timeoutMs: execute.timeout, shell: execute.shell },
    };
  });
  const [host, port] = c.health?.address.split(":") ?? [];
  return {
    url: (c.keyward ?? c.infisical)!.address.replace(/\/+$/, ""),
    auth,
    sinks: c.sinks.map((s) => at(s.config.path)),
    templates,
    leaseRenewBeforeMs: c.leases["renew-before"],
    health: host && port ? { host, port: Number(port) } : undefined,
  };
};
