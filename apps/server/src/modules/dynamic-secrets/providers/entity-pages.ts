/** How many names the orphan sweeper asks a target for at once, where the target lists in pages. */
export const ENTITY_PAGE = 2_000;

/**
 * Keyset pages of a target's credential names: `page(after, limit)` answers at most `limit` names
 * that sort after `after` in the target's own order, so no listing holds more than a page however
 * many credentials the target has.
 */
export async function* keysetPages(page: (after: string, limit: number) => Promise<string[]>) {
  for (let after = ""; ;) {
    const names = await page(after, ENTITY_PAGE);
    if (names.length > 0) yield names;
    if (names.length < ENTITY_PAGE) return;
    after = names[names.length - 1]!;
  }
}

/** A target that can only list everything at once: its names as one page. */
export async function* onePage(names: () => Promise<string[]>) {
  yield await names();
}
