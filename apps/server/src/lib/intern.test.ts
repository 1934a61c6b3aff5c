import { describe, expect, it } from "vitest";
import { createInterner } from "./intern";

describe("createInterner", () => {
  it("answers every string as given and null as null, past its bound as before it", () => {
    const shared = createInterner(2);
    const texts = ["org-a", "org-b", "org-c", "org-a", ["org", "b"].join("-"), "org-d", "org-c"];
    expect(texts.map((text) => shared(text))).toEqual(texts);
    expect(shared(null)).toBeNull();
  });
});
