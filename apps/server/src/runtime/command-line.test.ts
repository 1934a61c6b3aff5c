import { describe, expect, it } from "vitest";
import { parseCommand } from "./command-line";

describe("parseCommand", () => {
  it("serves without arguments and reads the two subcommands in both flag forms", () => {
    expect(parseCommand([])).toEqual({ kind: "serve" });
    expect(parseCommand(["backup", "--out", "a.kwb"])).toEqual({ kind: "backup", file: "a.kwb" });
    expect(parseCommand(["backup", "--out=a.kwb"])).toEqual({ kind: "backup", file: "a.kwb" });
    expect(parseCommand(["restore", "--in", "/x/a.kwb"])).toEqual({ kind: "restore", file: "/x/a.kwb" });
  });

  it("refuses anything else", () => {
    for (const args of [
      ["serve"],
      ["backup"],
      ["backup", "--in", "a"],
      ["restore", "--out", "a"],
      ["backup", "--out"],
      ["backup", "--out", "a", "b"],
      ["backup", "--out=", "x"],
      ["backup", "--out", "--force"],
      ["--help"],
    ])
      expect(parseCommand(args), args.join(" ")).toBeUndefined();
  });
});
