import { describe, expect, it } from "vitest";
import { parseSecretsText, toDotenv } from "../src/screens/secret-text";

describe("reading pasted secrets", () => {
  it("reads a .env file: comments, export, both quotes, escapes, a value spread over lines", () => {
    const parsed = parseSecretsText(
      [
        "# a comment",
        "",
        "export A=plain value # trailing comment",
        'B="quoted # kept" # dropped',
        "C='single \\n literal'",
        'D="tab\\there \\"quoted\\" back\\\\slash"',
        'E="first',
        'second"',
        "F=",
        "G=a=b",
      ].join("\n"),
    );
    expect(parsed).toEqual({
      format: "env",
      entries: [
        ["A", "plain value"],
        ["B", "quoted # kept"],
        ["C", "single \\n literal"],
        ["D", 'tab\there "quoted" back\\slash'],
        ["E", "first\nsecond"],
        ["F", ""],
        ["G", "a=b"],
      ],
      problems: [],
    });
  });

  it("names each line it cannot read, an unclosed quote and a repeated key (the last wins)", () => {
    expect(parseSecretsText("A=1\nnot a pair\nA=2\n").problems).toEqual([
      "Line 2: expected KEY=value",
      "A appears more than once: the last value is imported",
    ]);
    expect(parseSecretsText("A=1\nA=2").entries).toEqual([["A", "2"]]);
    const unclosed = parseSecretsText('A=1\nB="never closed\nC=3');
    expect(unclosed.entries).toEqual([["A", "1"]]);
    expect(unclosed.problems).toEqual(["Line 2: the quoted value of B is never closed"]);
  });

  it("reads a JSON object of strings, numbers and booleans, and refuses anything else", () => {
    expect(parseSecretsText('{"A": "x", "PORT": 5432, "DEBUG": false, "NESTED": {"a": 1}}')).toEqual({
      format: "json",
      entries: [
        ["A", "x"],
        ["PORT", "5432"],
        ["DEBUG", "false"],
      ],
      problems: ["NESTED: only strings, numbers and booleans are secret values"],
    });
    expect(parseSecretsText("{oops").problems[0]).toMatch(/^Not valid JSON/);
    expect(parseSecretsText("[1]").format).toBe("env");
  });

  it("reads a flat YAML mapping and refuses nesting instead of flattening it", () => {
    const parsed = parseSecretsText("---\nA: plain\nB: \"with: colon\"\nDB:\n  host: db\nC: 'x'\n");
    expect(parsed.format).toBe("yaml");
    expect(parsed.entries).toEqual([
      ["A", "plain"],
      ["B", "with: colon"],
      ["C", "x"],
    ]);
    expect(parsed.problems).toEqual([
      "Line 4: DB holds a nested value; only a flat mapping of keys is imported",
      "Line 5: nested YAML is not a secret; only a flat mapping of keys is imported",
    ]);
  });
});

describe("writing a folder as .env", () => {
  it("reads back the same values, and names hidden ones without exporting them", () => {
    const secrets = [
      { key: "PLAIN", value: "abc123", hidden: false },
      { key: "SPACED", value: " two words ", hidden: false },
      { key: "TRICKY", value: 'a "quote" # hash \\ back\nnew line', hidden: false },
      { key: "EMPTY", value: "", hidden: false },
      { key: "SECRET", value: "", hidden: true },
    ];
    const text = toDotenv(secrets);
    expect(text.split("\n")[0]).toBe("# Not exported (hidden by policy): SECRET");
    expect(parseSecretsText(text)).toEqual({
      format: "env",
      entries: secrets.filter((s) => !s.hidden).map((s) => [s.key, s.value]),
      problems: [],
    });
  });
});
