import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

type Node = {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
};
type Profile = { nodes: Node[]; samples: number[]; timeDeltas: number[] };

/** Where a frame's code lives: a package name, a Keyward source file, or node's internals. */
const placeOf = (url: string) => {
  if (!url) return "(native)";
  const pkg = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const src = /apps\/server\/(src\/.*)$/.exec(url) ?? /packages\/([^/]+)\//.exec(url);
  if (src) return src[1]!;
  return url.startsWith("node:") ? url : url.replace(/^.*\//, "");
};

const top = (totals: Map<string, number>, all: number, count: number) =>
  [...totals.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([name, us]) => `  ${((us / all) * 100).toFixed(1).padStart(5)}%  ${name}`)
    .join("\n");

/**
 * Summarise the largest `.cpuprofile` in `dir` (the server's main thread, should another thread have
 * written one beside it): self time by function and by place (package or source file), as shares of the
 * sampled time, so a hot path's costs can be compared run to run.
 */
export const summariseProfile = (dir: string, count = 25, lastSeconds = Number.POSITIVE_INFINITY) => {
  const newest = readdirSync(dir)
    .filter((f) => f.endsWith(".cpuprofile"))
    .map((f) => join(dir, f))
    .sort((a, b) => statSync(b).size - statSync(a).size)[0];
  if (!newest) return `no profile in ${dir}`;
  const profile = JSON.parse(readFileSync(newest, "utf8")) as Profile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  // Only the samples of the last `lastSeconds` (the load), not start-up and setup.
  const total = profile.timeDeltas.reduce((sum, delta) => sum + delta, 0);
  const from = total - lastSeconds * 1e6;
  const selfTime = new Map<number, number>();
  let at = 0;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (at >= from) selfTime.set(id, (selfTime.get(id) ?? 0) + delta);
  });
  const byFunction = new Map<string, number>();
  const byPlace = new Map<string, number>();
  let all = 0;
  for (const [id, us] of selfTime) {
    const frame = byId.get(id)!.callFrame;
    if (frame.functionName === "(idle)" || frame.functionName === "(program)") continue;
    all += us;
    const place = placeOf(frame.url);
    const fn = `${frame.functionName || "(anonymous)"} ${place}:${frame.lineNumber + 1}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
    byPlace.set(place, (byPlace.get(place) ?? 0) + us);
  }
  return [
    `profile ${newest}: ${(all / 1000).toFixed(0)} ms busy`,
    "self time by place:",
    top(byPlace, all, count),
    "self time by function:",
    top(byFunction, all, count),
  ].join("\n");
};
