import { describe, expect, it } from "vitest";
import { dependencyOrder } from "./table-order";

const table = (name: string) => ({ name, columns: [{ name: "id", type: "uuid" }] });
const names = (tables: { name: string }[]) => tables.map((t) => t.name);

describe("dependencyOrder", () => {
  it("puts referenced tables first, ties by name, and ignores self-references", () => {
    const tables = ["secrets", "projects", "folders", "audit"].map(table);
    const links = [
      { child: "secrets", parent: "folders" },
      { child: "folders", parent: "projects" },
      { child: "folders", parent: "folders" },
    ];
    expect(names(dependencyOrder(tables, links))).toEqual(["audit", "projects", "folders", "secrets"]);
  });

  it("keeps every table of a cycle, by name, after the tables it can order", () => {
    const tables = ["b", "a", "c"].map(table);
    const links = [
      { child: "a", parent: "b" },
      { child: "b", parent: "a" },
    ];
    expect(names(dependencyOrder(tables, links))).toEqual(["c", "a", "b"]);
  });
});
