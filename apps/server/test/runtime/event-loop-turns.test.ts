import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { createTenant } from "../helpers/tenant";

describe("a long run of queries", () => {
  it("lets the event loop turn (PGlite settles queries in microtasks; sockets must still be read)", async () => {
    const { db } = (await createTenant()).app.deps;
    let turns = 0;
    const ticker = setInterval(() => (turns += 1), 1);
    const started = performance.now();
    let queries = 0;
    while (performance.now() - started < 300) {
      await sql`select 1`.execute(db);
      queries += 1;
    }
    clearInterval(ticker);
    expect(queries).toBeGreaterThan(10);
    // Bounded stretches (20 ms on PGlite) let a 1 ms timer run at least ~every stretch.
    expect(turns).toBeGreaterThanOrEqual(5);
  });
});
