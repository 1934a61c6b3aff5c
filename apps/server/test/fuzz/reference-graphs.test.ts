import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_SECRET_VALUE_BYTES } from "@keyward/contract";
import { createSecretsScope, expectOk, type SecretsScope } from "../secrets/helpers";

/**
 * Work in proportion to the request: every route that follows references, imports or trees is
 * asked about a generated graph (repeated references, dense layers, cycles, chained imports) and
 * must answer within a fixed time, with a success or a 4xx, never a 5xx. Where the graph has no
 * cycle and no chain past the depth bound, an expanded value must also equal plain substitution.
 */

/** One answer's time bound: generous for a loaded two-core machine, far below an exponential walk. */
const ANSWER_BUDGET_MS = 5_000;

type Graph = { keys: string[]; values: string[] };

/** Secret i references only secrets after it: a DAG, at most `keys.length - 1` deep. */
const dag = fc.integer({ min: 2, max: 9 }).chain((n) =>
  fc
    .tuple(
      ...Array.from({ length: n }, (_, i) =>
        fc.tuple(
          i === n - 1 ? fc.constant([]) : fc.array(fc.integer({ min: i + 1, max: n - 1 }), { maxLength: 5 }),
          fc.stringMatching(/^[a-z]{0,3}$/),
        ),
      ),
    )
    .map((rows): Graph => ({
      keys: rows.map((_, i) => `K${i}`),
      values: rows.map(([refs, text]) => text + refs.map((r) => `\${K${r}}`).join(text)),
    })),
);

/** Any references between the secrets, cycles included, with up to eight repetitions each. */
const anyGraph = fc.integer({ min: 2, max: 10 }).chain((n) =>
  fc
    .array(
      fc.array(
        fc.tuple(fc.integer({ min: 0, max: n - 1 }), fc.integer({ min: 1, max: 8 }), fc.constantFrom("", "staging.")),
        { maxLength: 4 },
      ),
      { minLength: n, maxLength: n },
    )
    .map((rows): Graph => {
      const keys = rows.map((_, i) => `G${i}`);
      const values = rows.map(
        (refs) => refs.map(([target, times, env]) => `\${${env}G${target}}`.repeat(times)).join("-") || "leaf",
      );
      return { keys, values };
    }),
);

/** Plain substitution of a DAG, or undefined past the secret value limit. */
const substitute = (graph: Graph) => {
  const memo = new Map<string, string | undefined>();
  const valueOf = (key: string): string | undefined => {
    if (memo.has(key)) return memo.get(key);
    const raw = graph.values[graph.keys.indexOf(key)]!;
    let out = "";
    let last = 0;
    for (const m of raw.matchAll(/\$\{(K\d+)\}/g)) {
      const inner = valueOf(m[1]!);
      if (inner === undefined) return void memo.set(key, undefined);
      out += raw.slice(last, m.index) + inner;
      last = m.index + m[0].length;
      if (out.length > MAX_SECRET_VALUE_BYTES) return void memo.set(key, undefined);
    }
    out += raw.slice(last);
    memo.set(key, out);
    return out;
  };
  return valueOf;
};

const write = async (scope: SecretsScope, environment: string, graph: Graph) =>
  expectOk(
    await scope.tenant.admin.secretsV4.batchCreate({
      body: {
        projectId: scope.projectId,
        environment,
        secretPath: "/",
        secrets: graph.keys.map((secretKey, i) => ({ secretKey, secretValue: graph.values[i]! })),
      },
    }),
  );

/** Every route that follows the graph, for each secret of it; each answer checked for status and time. */
const askEverything = async (scope: SecretsScope, keys: readonly string[]) => {
  const base = { environment: "dev", secretPath: "/" };
  const asks: [string, string, Record<string, string>][] = [
    [
      "v4 list",
      "/api/v4/secrets",
      {
        projectId: scope.projectId,
        ...base,
        expandSecretReferences: "true",
        recursive: "true",
        includeImports: "true",
      },
    ],
    [
      "v3 list",
      "/api/v3/secrets/raw",
      { workspaceId: scope.projectId, ...base, expandSecretReferences: "true", include_imports: "true" },
    ],
    ...["staging", "prod"].map((environment): [string, string, Record<string, string>] => [
      `v4 ${environment} list`,
      "/api/v4/secrets",
      {
        projectId: scope.projectId,
        environment,
        secretPath: "/",
        expandSecretReferences: "true",
        includeImports: "true",
      },
    ]),
    ...keys.flatMap((key): [string, string, Record<string, string>][] => [
      [
        `v4 get ${key}`,
        `/api/v4/secrets/${key}`,
        { projectId: scope.projectId, ...base, expandSecretReferences: "true" },
      ],
      [
        `v3 get ${key}`,
        `/api/v3/secrets/raw/${key}`,
        { workspaceId: scope.projectId, ...base, expandSecretReferences: "true", include_imports: "true" },
      ],
      [`tree ${key}`, `/api/v4/secrets/${key}/secret-reference-tree`, { projectId: scope.projectId, ...base }],
      [
        `dependency tree ${key}`,
        `/api/v4/secrets/${key}/reference-dependency-tree`,
        { projectId: scope.projectId, ...base },
      ],
    ]),
  ];
  const answers = new Map<string, { status: number; body: unknown }>();
  for (const [label, path, query] of asks) {
    const started = performance.now();
    const res = await scope.http.get(path, query);
    const took = performance.now() - started;
    expect(res.status, `${label}: ${JSON.stringify(res.body).slice(0, 300)}`).toBeLessThan(500);
    expect(took, `${label} took ${Math.round(took)} ms`).toBeLessThan(ANSWER_BUDGET_MS);
    answers.set(label, res);
  }
  return answers;
};

describe("routes that follow references, imports and trees do work in proportion to the request", () => {
  it("a DAG: every answer in budget, and each expanded value is plain substitution or a 422 past the value limit", async () => {
    await fc.assert(
      fc.asyncProperty(dag, async (graph) => {
        const scope = await createSecretsScope();
        await write(scope, "dev", graph);
        const answers = await askEverything(scope, graph.keys);
        const expected = substitute(graph);
        for (const key of graph.keys) {
          const got = answers.get(`v4 get ${key}`)!;
          const want = expected(key);
          if (want === undefined) expect(got.status).toBe(422);
          else expect(got.body).toMatchObject({ secret: { secretKey: key, secretValue: want } });
        }
      }),
      { numRuns: 12 },
    );
  });

  it("any graph, cycles and chained imports included: every answer in budget and never a 5xx", async () => {
    await fc.assert(
      fc.asyncProperty(anyGraph, async (graph) => {
        const scope = await createSecretsScope();
        // staging holds the same keys as plain values first, so cross-environment references resolve.
        await write(scope, "staging", { ...graph, values: graph.keys.map(() => "s") });
        await write(scope, "dev", graph);
        for (const [environment, from] of [
          ["dev", "staging"],
          ["prod", "dev"],
        ] as const)
          expectOk(
            await scope.tenant.admin.secretImports.create({
              body: { workspaceId: scope.projectId, environment, path: "/", import: { environment: from, path: "/" } },
            }),
          );
        await askEverything(scope, graph.keys);
        expect((await scope.http.get("/api/status", {})).status).toBe(200);
      }),
      { numRuns: 10 },
    );
  });
});
