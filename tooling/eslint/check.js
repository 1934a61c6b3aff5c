#!/usr/bin/env node
/**
 * `keyward-check [--with <dir>:<paths>]… <paths…>`: the package's type check (as `tsc -p tsconfig.json`)
 * and its lint (as `eslint <paths…>`) in one process over one TypeScript program. The type-aware lint
 * rules then ask a checker that has already seen every file, instead of building the program a second
 * time: the server's check costs about half the CPU of the two commands run apart. Type errors are
 * reported for the package's own files; a workspace package imported as source (the contract) is checked
 * by its own run, not again by every package that imports it — or, named with `--with`, by this run: its
 * files join the program (most of their types are resolved for this package anyway), their type errors
 * are reported and `<paths>` (comma-separated) are linted under that package's own ESLint config.
 */
import { resolve } from "node:path";
import { ESLint } from "eslint";
import ts from "typescript";

const args = process.argv.slice(2);
/** The packages checked along (`--with <dir>:<paths>`), as absolute directories with their lint paths. */
const along = [];
const paths = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--with") {
    const [dir, lint = "."] = (args[++i] ?? "").split(":");
    along.push({ dir: resolve(dir), lint: lint.split(",") });
  } else paths.push(args[i]);
}
const cwd = process.cwd();

const configPath = ts.findConfigFile(cwd, ts.sys.fileExists, "tsconfig.json");
if (!configPath) {
  console.error(`keyward-check: no tsconfig.json in ${cwd}`);
  process.exit(2);
}
const parseConfig = (path) =>
  ts.getParsedCommandLineOfConfigFile(
    path,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        console.error(ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"));
        process.exit(2);
      },
    },
  );
const config = parseConfig(configPath);
const alongConfigs = along.map(({ dir }) => {
  const path = ts.findConfigFile(dir, ts.sys.fileExists, "tsconfig.json");
  if (!path) {
    console.error(`keyward-check: no tsconfig.json in ${dir}`);
    process.exit(2);
  }
  return parseConfig(path);
});
const program = ts.createProgram({
  rootNames: [...config.fileNames, ...alongConfigs.flatMap((c) => c.fileNames)],
  options: config.options,
  projectReferences: config.projectReferences,
});

/** The files a run reports on: this package's own, and those of the packages checked along. */
const filesUnder = (dir) =>
  program
    .getSourceFiles()
    .filter(
      (file) =>
        !file.isDeclarationFile && file.fileName.startsWith(`${dir}/`) && !file.fileName.includes("/node_modules/"),
    );
const reported = [cwd, ...along.map(({ dir }) => dir)].flatMap(filesUnder);
const diagnostics = [
  ...config.errors,
  ...alongConfigs.flatMap((c) => c.errors),
  ...program.getOptionsDiagnostics(),
  ...program.getGlobalDiagnostics(),
  ...reported.flatMap((file) => [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)]),
];
if (diagnostics.length > 0)
  process.stdout.write(
    ts.formatDiagnosticsWithColorAndContext(diagnostics, {
      getCanonicalFileName: (name) => name,
      getCurrentDirectory: () => cwd,
      getNewLine: () => "\n",
    }),
  );

/** Lints `lint` under `dir`'s ESLint config, the type-aware rules asking the one program. */
const lintIn = async (dir, lint) => {
  const eslint = new ESLint({
    cwd: dir,
    overrideConfig: { languageOptions: { parserOptions: { programs: [program], projectService: false } } },
  });
  return { eslint, results: await eslint.lintFiles(lint) };
};
const { eslint, results: ownResults } = await lintIn(cwd, paths.length > 0 ? paths : ["."]);
const results = [...ownResults];
for (const { dir, lint } of along) results.push(...(await lintIn(dir, lint)).results);
const output = await (await eslint.loadFormatter("stylish")).format(results);
if (output) process.stdout.write(output);

const lintErrors = results.reduce((sum, result) => sum + result.errorCount, 0);
if (diagnostics.length > 0 || lintErrors > 0) {
  console.error(`keyward-check: ${diagnostics.length} type error(s), ${lintErrors} lint error(s)`);
  process.exit(1);
}
