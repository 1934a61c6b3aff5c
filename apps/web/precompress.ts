import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import type { Plugin, Rollup } from "vite";

/** The JavaScript a first visit downloads, gzip-compressed, may not pass this (the build fails past it). */
export const FIRST_LOAD_BUDGET = 300 * 1024;

/** Text assets worth compressing; smaller files gain less than the header costs. */
const COMPRESSIBLE = /\.(js|css|svg|json|txt)$/;
const MIN_BYTES = 1024;

/**
 * The files the entry page loads before anything else: the entry chunk and every chunk it imports
 * statically (not the screens loaded on demand).
 */
export const firstLoadFiles = (bundle: Rollup.OutputBundle): string[] => {
  const seen = new Set<string>();
  const visit = (name: string) => {
    const chunk = bundle[name];
    if (seen.has(name) || chunk?.type !== "chunk") return;
    seen.add(name);
    chunk.imports.forEach(visit);
  };
  for (const [name, output] of Object.entries(bundle)) if (output.type === "chunk" && output.isEntry) visit(name);
  return [...seen];
};

const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;

/**
 * Writes `name.br` and `name.gz` beside each built text asset so the server sends them compressed
 * without compressing per request, and prints (and holds to its budget) the first load's size.
 */
export const precompress = (): Plugin => {
  let outDir = "dist";
  return {
    name: "keyward-precompress",
    apply: "build",
    configResolved(config) {
      outDir = config.build.outDir;
    },
    writeBundle(_options, bundle) {
      for (const name of Object.keys(bundle)) {
        if (!COMPRESSIBLE.test(name)) continue;
        const path = join(outDir, name);
        const body = readFileSync(path);
        if (body.length < MIN_BYTES) continue;
        writeFileSync(`${path}.gz`, gzipSync(body, { level: 9 }));
        writeFileSync(
          `${path}.br`,
          brotliCompressSync(body, {
            params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length },
          }),
        );
      }
      const files = firstLoadFiles(bundle);
      const raw = files.reduce((sum, name) => sum + readFileSync(join(outDir, name)).length, 0);
      const gzip = files.reduce(
        (sum, name) => sum + gzipSync(readFileSync(join(outDir, name)), { level: 9 }).length,
        0,
      );
      this.info(
        `first load: ${files.length} scripts, ${kib(raw)} (${kib(gzip)} gzip; budget ${kib(FIRST_LOAD_BUDGET)})`,
      );
      if (gzip > FIRST_LOAD_BUDGET)
        this.error(`first load is ${kib(gzip)} gzip, over its ${kib(FIRST_LOAD_BUDGET)} budget`);
    },
  };
};
