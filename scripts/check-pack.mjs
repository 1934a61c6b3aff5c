// Installs the tarballs of `pnpm pack:dist` in an empty folder outside the repository, as an
// internal service would, and checks ESM import, CommonJS require, the types and the binary.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dirname, "..");
const packages = join(root, "dist/packages");
const tarballs = readdirSync(packages)
  .filter((f) => f.endsWith(".tgz"))
  .map((f) => join(packages, f));
const dir = mkdtempSync(join(tmpdir(), "keyward-pack-"));
const results = [];
const check = (name, fn) => {
  try {
    fn();
    results.push([name, true]);
    console.log(`ok   ${name}`);
  } catch (error) {
    results.push([name, false]);
    console.log(`FAIL ${name}\n${error.stdout ?? ""}${error.stderr ?? ""}${error.message}`);
  }
};
const run = (file, args) => execFileSync(file, args, { cwd: dir, encoding: "utf8", stdio: "pipe" });

try {
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  check("npm install of the tarballs", () => run("npm", ["install", "--no-audit", "--no-fund", ...tarballs]));
  check("ESM import", () => {
    const out = run("node", [
      "--input-type=module",
      "-e",
      `import { createKeywardClient, KeywardError, ok } from "@keyward/client";
       const c = createKeywardClient({ baseUrl: "http://127.0.0.1:1" });
       if (typeof c.secretsV3.list !== "function" || typeof ok !== "function" || !KeywardError) throw new Error("bad exports");
       console.log("esm")`,
    ]);
    if (!out.includes("esm")) throw new Error(out);
  });
  check("CommonJS require", () => {
    const out = run("node", [
      "-e",
      `const k = require("@keyward/client"); if (typeof k.createKeywardClient !== "function") throw new Error("bad"); console.log("cjs")`,
    ]);
    if (!out.includes("cjs")) throw new Error(out);
  });
  check("OpenAPI document export", () =>
    run("node", [
      "--input-type=module",
      "-e",
      `import { buildOpenApiDocument } from "@keyward/client/openapi"; if (!buildOpenApiDocument().paths["/api/v3/secrets/raw"]) throw new Error("no path")`,
    ]),
  );
  check("declaration files import only the client's own dependencies", () => {
    const installed = join(dir, "node_modules/@keyward/client");
    const manifest = JSON.parse(readFileSync(join(installed, "package.json"), "utf8"));
    const allowed = new Set(Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies }));
    const packageOf = (specifier) =>
      specifier
        .split("/")
        .slice(0, specifier.startsWith("@") ? 2 : 1)
        .join("/");
    const strays = [];
    for (const file of readdirSync(join(installed, "dist")).filter((f) => /\.d\.c?ts$/.test(f))) {
      const text = readFileSync(join(installed, "dist", file), "utf8");
      for (const [, specifier] of text.matchAll(/(?:from|import\()\s*['"]([^'"]+)['"]/g)) {
        if (specifier.startsWith(".") || specifier.startsWith("node:")) continue;
        if (!allowed.has(packageOf(specifier))) strays.push(`${file}: ${specifier}`);
      }
    }
    if (strays.length > 0) throw new Error(`imports of undeclared packages:\n${strays.join("\n")}`);
  });
  check("types compile without the repository", () => {
    writeFileSync(
      join(dir, "check.ts"),
      `import { createKeywardClient, ok, type ProjectPermissionRule } from "@keyward/client";
export const run = async () => {
  const client = createKeywardClient({ baseUrl: "http://x", token: "t" });
  const r = await client.secretsV3.list({ query: { workspaceId: "p", environment: "dev" } });
  if (r.status === 304) return "unchanged since the ETag sent";
  if (r.status !== 200) return r.body.reqId;
  const { secrets } = await ok(client.secretsV3.list({ query: { workspaceId: "p" } }));
  return secrets.map((s) => s.secretKey);
};
export const rule: ProjectPermissionRule = { subject: "secrets", action: "readValue", conditions: { environment: "dev" } };
// @ts-expect-error wrong action
export const bad: ProjectPermissionRule = { subject: "secrets", action: "lease" };
`,
    );
    for (const moduleResolution of ["NodeNext", "Bundler"]) {
      run(join(root, "node_modules/.bin/tsc"), [
        "--noEmit",
        "--strict",
        "--skipLibCheck",
        "--target",
        "ES2022",
        "--lib",
        "ES2023,DOM",
        "--module",
        moduleResolution === "NodeNext" ? "NodeNext" : "ESNext",
        "--moduleResolution",
        moduleResolution,
        "check.ts",
      ]);
    }
  });
  check("both packages are Apache-2.0 and carry the licence text", () => {
    for (const name of ["@keyward/client", "@keyward/cli"]) {
      const installed = join(dir, "node_modules", name);
      const { license } = JSON.parse(readFileSync(join(installed, "package.json"), "utf8"));
      if (license !== "Apache-2.0") throw new Error(`${name}: license ${license}`);
      if (!readFileSync(join(installed, "LICENSE"), "utf8").startsWith("Apache License"))
        throw new Error(`${name}: no LICENSE`);
    }
  });
  check("keyward binary", () => {
    const out = run(join(dir, "node_modules/.bin/keyward"), ["--help"]);
    if (!out.includes("Usage: keyward")) throw new Error(out);
  });
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const failed = results.filter(([, passed]) => !passed).length;
console.log(`${results.length - failed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
