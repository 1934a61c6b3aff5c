import { describe, expect, it } from "vitest";
import { ForbiddenError } from "../../errors";
import { cooperative } from "../../lib/cooperative";
import { expandEach } from "./list-expansion";

/** `settle`'s value (or failure) on a later turn of the event loop, as an expansion's database read. */
const later = <T>(settle: () => T) =>
  new Promise<T>((resolve, reject) =>
    setImmediate(() => {
      try {
        resolve(settle());
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    }),
  );

describe("expandEach", () => {
  it("gathers 403s into one after every item, emitting in order only when none failed", async () => {
    const emitted: number[] = [];
    await expandEach(
      [1, 2, 3],
      (n) => (n === 2 ? later(() => n * 10) : n * 10),
      (v) => emitted.push(v),
    );
    expect(emitted).toEqual([10, 20, 30]);
    const refused = expandEach(
      [1, 2, 3],
      (n) => {
        if (n === 3) throw new ForbiddenError("three");
        return n === 1 ? Promise.reject(new ForbiddenError("one")) : n;
      },
      () => expect.unreachable("nothing is emitted from a refused list"),
    );
    await expect(refused).rejects.toMatchObject({
      message: "Failed to expand one or more secret references",
      details: ["Failed to expand secret reference: three", "Failed to expand secret reference: one"],
    });
  });

  it("ends with another failure without leaving a rejection unheard while the list pauses", async () => {
    const unheard: unknown[] = [];
    const note = (reason: unknown) => unheard.push(reason);
    process.on("unhandledRejection", note);
    try {
      // Every item pauses first (a 0 ms slice): the first item's failure lands during the next pauses.
      const failing = expandEach(
        [1, 2, 3, 4],
        (n) =>
          n === 1
            ? Promise.reject(new Error("the database went away"))
            : later(() => {
                if (n === 3) throw new Error("a second failure");
                return n;
              }),
        () => undefined,
        cooperative(0),
      );
      await expect(failing).rejects.toThrow("the database went away");
      await later(() => undefined);
      await later(() => undefined);
    } finally {
      process.off("unhandledRejection", note);
    }
    expect(unheard).toEqual([]);
  });
});
