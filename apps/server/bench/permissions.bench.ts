import { PROJECT_PERMISSION_CATALOG, parseGlobPattern } from "@keyward/contract";
import picomatch from "picomatch";
import { buildAbility, globMatcher, type PermissionRule } from "../src/permissions";

/**
 * The permission engine alone: building an ability and answering its first check, at 10, 30,
 * 100 and 1,000 rules, then checks on an ability already built (the cached case), and the worst
 * match time of accepted $glob patterns on 512-character paths. Targets: build +
 * first check <= 50 µs at 30 rules and <= 150 µs at 100; a reused check <= 2 µs at 10 rules and
 * <= 20 µs at 100.
 */
const subjects = Object.entries(PROJECT_PERMISSION_CATALOG);
const ENVS = ["dev", "staging", "prod", "qa"];

/** A realistic mix: a third of the rules carry environment and secretPath conditions, some forbid. */
const rulesOf = (count: number): PermissionRule[] =>
  Array.from({ length: count }, (_, i) => {
    const [subject, actions] = subjects[i % subjects.length]!;
    const conditional = subject === "secrets" || i % 3 === 0;
    return {
      subject,
      action: actions.slice(0, 1 + (i % actions.length)),
      inverted: i % 11 === 10,
      ...(conditional && (subject === "secrets" || subject === "secret-folders" || subject === "secret-imports")
        ? {
            conditions: {
              environment: { $in: [ENVS[i % 4]!, ENVS[(i + 1) % 4]!] },
              secretPath: { $glob: `/app-${i % 7}/**` },
            },
          }
        : {}),
    };
  });

const OBJECT = { environment: "dev", secretPath: "/app-1/web/config" };

const timeNs = (iterations: number, fn: () => void) => {
  for (let i = 0; i < Math.min(iterations, 2_000); i++) fn();
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) fn();
  return Number(process.hrtime.bigint() - start) / iterations;
};

let sink = 0;
const rows: string[] = [];
for (const count of [10, 30, 100, 1000]) {
  const rules = rulesOf(count);
  // The rule array is copied each time so nothing built earlier is reused.
  const iterations = count >= 1000 ? 2_000 : 20_000;
  const build = timeNs(iterations, () => {
    const ability = buildAbility(rules.slice());
    if (ability.can("read", "secrets", OBJECT)) sink++;
  });
  const ability = buildAbility(rules);
  const objectCheck = timeNs(200_000, () => {
    if (ability.can("read", "secrets", OBJECT)) sink++;
  });
  const typeCheck = timeNs(200_000, () => {
    if (ability.can("edit", "identity")) sink++;
  });
  rows.push(
    `${String(count).padStart(5)} rules   build + first check ${(build / 1000).toFixed(2).padStart(7)} µs   ` +
      `reused check: object ${(objectCheck / 1000).toFixed(3)} µs, type ${(typeCheck / 1000).toFixed(3)} µs`,
  );
}

// Worst accepted-glob match: patterns at the validation limits plus random accepted patterns, on
// crafted 512-character paths (best of three runs each, so a GC pause does not count).
const globTime = (matcher: (v: string) => boolean, path: string) => {
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 3; i++) {
    const start = process.hrtime.bigint();
    if (matcher(path)) sink++;
    best = Math.min(best, Number(process.hrtime.bigint() - start) / 1e6);
  }
  return best;
};
const pathsFor = (pattern: string) => {
  const chars = [...new Set(pattern.replace(/[^a-z.]/g, ""))];
  const out = [`/${"a".repeat(511)}`, "a/".repeat(256), `${"/a".repeat(255)}/c`];
  for (const c of chars.length ? chars : ["a"])
    out.push(c.repeat(512), `/${c}`.repeat(256), `${c.repeat(20)}/`.repeat(24));
  for (const c of chars) for (const d of chars) out.push(`${c}${d}`.repeat(256), `/${c}/${d}`.repeat(128));
  return out.map((p) => p.slice(0, 512));
};
const TOKENS = ["a", "b", "ab", ".", "*", "?", "[ab]", "{a,ab}", "{a,b*}", "/", "/", "/", "**", "x"];
const randomPattern = () => {
  let p = Math.random() < 0.5 ? "/" : "";
  const n = 2 + Math.floor(Math.random() * 10);
  for (let i = 0; i < n; i++) p += TOKENS[Math.floor(Math.random() * TOKENS.length)]!;
  return p;
};
const isAccepted = (p: string) => {
  try {
    parseGlobPattern(p);
    return true;
  } catch {
    return false;
  }
};
const candidates = [
  "*a*b",
  "a*a*/**",
  "**/a/**/b",
  "/**/*a*/**/*b*",
  "*a*/**/*a*",
  "{a,ab}*b*",
  "/x/*/**/*ab*",
  "[ab]*[ab]*",
];
const fuzzUntil = Date.now() + Number(process.env.BENCH_GLOB_SECONDS ?? 10) * 1000;
let tried = 0;
const slowest: { ms: number; pattern: string; path: string }[] = [];
for (let i = 0; i < candidates.length || Date.now() < fuzzUntil; i++) {
  const pattern = i < candidates.length ? candidates[i]! : randomPattern();
  if (!isAccepted(pattern)) continue;
  tried++;
  const matcher = globMatcher(pattern);
  for (const path of pathsFor(pattern)) {
    const ms = globTime(matcher, path);
    if (slowest.length < 20 || ms > slowest[slowest.length - 1]!.ms) {
      slowest.push({ ms, pattern, path });
      slowest.sort((a, b) => b.ms - a.ms).splice(20);
    }
  }
}
// A preemption can slow three back-to-back runs alike: re-time the slowest cases, best of 30.
let worstMs = 0;
let worstPattern = "";
for (const { pattern, path } of slowest) {
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 10; i++) best = Math.min(best, globTime(globMatcher(pattern), path));
  if (best > worstMs) [worstMs, worstPattern] = [best, pattern];
}
const refused = "*a*a*a*a*b";
const slow = picomatch(refused, { strictSlashes: false });
const slowStart = process.hrtime.bigint();
slow("a".repeat(40));
const slowMs = Number(process.hrtime.bigint() - slowStart) / 1e6;

console.log("permission engine");
for (const row of rows) console.log(row);
console.log(
  `worst accepted $glob on a 512-char path over ${tried} patterns: ${worstMs.toFixed(3)} ms (${worstPattern})`,
);
console.log(`a refused pattern for comparison, ${refused} on 40 chars: ${slowMs.toFixed(1)} ms`);
if (sink < 0) console.log(sink);
