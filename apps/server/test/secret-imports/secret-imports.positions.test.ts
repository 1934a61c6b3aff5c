import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createFolder } from "../helpers/structure";
import { createProject, createTenant, expectOk, type Tenant } from "../helpers/tenant";

const SOURCES = 6;

const prepare = async () => {
  const tenant = await createTenant();
  const project = await createProject(tenant);
  for (let i = 1; i <= SOURCES; i += 1) await createFolder(tenant, project.id, "staging", "/", `s${i}`);
  return { tenant, projectId: project.id };
};

const fillFolder = async (tenant: Tenant, projectId: string, path: string, count: number) => {
  const ids: string[] = [];
  for (let i = 1; i <= count; i += 1) {
    const res = await tenant.admin.secretImports.create({
      body: { workspaceId: projectId, environment: "dev", path, import: { environment: "staging", path: `/s${i}` } },
    });
    ids.push(expectOk(res).secretImport.id);
  }
  return ids;
};

const listed = async (tenant: Tenant, projectId: string, path: string) =>
  expectOk(await tenant.admin.secretImports.list({ query: { workspaceId: projectId, environment: "dev", path } }))
    .secretImports;

/** Positions are exactly 1..n, in list order. */
const expectDense = (imports: { position: number }[]) => {
  expect(imports.map((i) => i.position)).toEqual(imports.map((_, index) => index + 1));
};

type Op = { kind: "move"; pick: number; to: number } | { kind: "delete"; pick: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("move" as const),
      pick: fc.nat(),
      to: fc.integer({ min: 0, max: SOURCES + 3 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("delete" as const), pick: fc.nat() }) },
);

describe("secret import positions (property)", () => {
  it("any sequence of moves and deletes keeps positions 1..n in the modelled order", async () => {
    const { tenant, projectId } = await prepare();
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: SOURCES }), fc.array(opArb, { maxLength: 8 }), async (count, ops) => {
        run += 1;
        const path = `/run${run}`;
        await createFolder(tenant, projectId, "dev", "/", `run${run}`);
        const model = await fillFolder(tenant, projectId, path, count);
        for (const op of ops) {
          if (model.length === 0) break;
          const id = model[op.pick % model.length]!;
          if (op.kind === "delete") {
            expectOk(
              await tenant.admin.secretImports.delete({
                params: { secretImportId: id },
                body: { workspaceId: projectId, environment: "dev", path },
              }),
            );
            model.splice(model.indexOf(id), 1);
          } else {
            const res = await tenant.admin.secretImports.update({
              params: { secretImportId: id },
              body: { projectId, environment: "dev", path, import: { position: op.to } },
            });
            expectOk(res);
            if (op.to > 0) {
              model.splice(model.indexOf(id), 1);
              model.splice(Math.min(op.to, model.length + 1) - 1, 0, id);
            }
          }
          const imports = await listed(tenant, projectId, path);
          expectDense(imports);
          expect(imports.map((i) => i.id)).toEqual(model);
        }
      }),
      { numRuns: 25 },
    );
  }, 120_000);
});

describe("secret import positions (concurrency)", () => {
  it("parallel creates, moves and deletes never produce duplicate or missing positions", async () => {
    const { tenant, projectId } = await prepare();
    await createFolder(tenant, projectId, "dev", "/", "busy");
    const creates = await Promise.all(
      Array.from({ length: SOURCES }, (_, i) =>
        tenant.admin.secretImports.create({
          body: {
            workspaceId: projectId,
            environment: "dev",
            path: "/busy",
            import: { environment: "staging", path: `/s${i + 1}` },
          },
        }),
      ),
    );
    const ids = creates.map((res) => expectOk(res).secretImport.id);
    expectDense(await listed(tenant, projectId, "/busy"));

    const moves = Array.from({ length: 24 }, (_, i) =>
      tenant.admin.secretImports.update({
        params: { secretImportId: ids[i % ids.length]! },
        body: { projectId, environment: "dev", path: "/busy", import: { position: ((i * 7) % SOURCES) + 1 } },
      }),
    );
    const deletion = tenant.admin.secretImports.delete({
      params: { secretImportId: ids[2]! },
      body: { workspaceId: projectId, environment: "dev", path: "/busy" },
    });
    const results = await Promise.all([...moves, deletion]);
    // A move racing the delete of its own import may find it gone; everything else succeeds.
    for (const res of results) expect([200, 400]).toContain(res.status);
    expect(
      results
        .filter((res) => res.status === 400)
        .every((res) => (res.body as { message: string }).message === "Secret import not found"),
    ).toBe(true);
    const imports = await listed(tenant, projectId, "/busy");
    expectDense(imports);
    expect(new Set(imports.map((i) => i.id))).toEqual(new Set(ids.filter((_, index) => index !== 2)));
  });
});
