import type { ImportEdge } from "./secret-import.repository";

type Node = { envId: string; path: string };
const key = (node: Node) => `${node.envId}\u0000${node.path}`;

/**
 * Would importing `source` into `target` close a cycle? True when the source is the target itself
 * or the target is reachable from the source through existing imports (transitively). `ignoreId`
 * leaves out the edge being replaced by an update.
 */
export const wouldCreateCycle = (edges: readonly ImportEdge[], target: Node, source: Node, ignoreId?: string) => {
  const goal = key(target);
  if (key(source) === goal) return true;
  const next = new Map<string, string[]>();
  for (const edge of edges) {
    if (edge.id === ignoreId) continue;
    const from = key({ envId: edge.env_id, path: edge.path });
    const list = next.get(from);
    const to = key({ envId: edge.import_env, path: edge.import_path });
    if (list) list.push(to);
    else next.set(from, [to]);
  }
  const seen = new Set<string>([key(source)]);
  const stack = [key(source)];
  while (stack.length > 0) {
    for (const to of next.get(stack.pop()!) ?? []) {
      if (to === goal) return true;
      if (!seen.has(to)) {
        seen.add(to);
        stack.push(to);
      }
    }
  }
  return false;
};
