/** A table as the catalog describes it: its name and its stored columns (generated ones left out), in order. */
export type CatalogTable = { name: string; columns: { name: string; type: string }[] };

/**
 * Tables ordered so that a table comes after every table its foreign keys reference (a reference to
 * itself, or a cycle, cannot be ordered: those tables follow by name). Ties go by name, so the order
 * of one schema is always the same.
 */
export const dependencyOrder = (
  tables: readonly CatalogTable[],
  links: readonly { child: string; parent: string }[],
): CatalogTable[] => {
  const byName = new Map(tables.map((table) => [table.name, table]));
  const waitingOn = new Map(tables.map((table) => [table.name, new Set<string>()]));
  for (const { child, parent } of links) {
    if (child !== parent && byName.has(parent)) waitingOn.get(child)?.add(parent);
  }
  const ordered: CatalogTable[] = [];
  const placed = new Set<string>();
  const names = [...byName.keys()].sort();
  for (;;) {
    const ready = names.filter((name) => !placed.has(name) && [...waitingOn.get(name)!].every((p) => placed.has(p)));
    if (ready.length === 0) break;
    for (const name of ready) {
      placed.add(name);
      ordered.push(byName.get(name)!);
    }
  }
  for (const name of names) if (!placed.has(name)) ordered.push(byName.get(name)!);
  return ordered;
};
