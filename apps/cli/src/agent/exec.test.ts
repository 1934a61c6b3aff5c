import { describe, expect, it } from "vitest";
import { splitCommand } from "./exec";

describe("splitCommand", () => {
  it("splits words and keeps quoted text whole, expanding nothing", () => {
    expect(splitCommand(`systemctl  reload "my app" 'a $HOME b' c\\ d`)).toEqual([
      "systemctl",
      "reload",
      "my app",
      "a $HOME b",
      "c d",
    ]);
    expect(splitCommand(`echo "say \\"hi\\"" '' x|y`)).toEqual(["echo", 'say "hi"', "", "x|y"]);
  });

  it("refuses an unclosed quote", () => {
    expect(() => splitCommand(`echo "oops`)).toThrow(/unclosed/);
  });
});
