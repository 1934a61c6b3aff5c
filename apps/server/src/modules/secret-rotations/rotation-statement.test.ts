import { describe, expect, it } from "vitest";
import { parseRotationStatement, renderRotationStatement } from "./rotation-statement";

const values = { username: `app"user'; drop`, password: `p'a;ss\\word`, database: "db.main" };

const refusal = (dialect: "postgres" | "mysql", statement: string) => {
  try {
    parseRotationStatement(dialect, statement);
  } catch (error) {
    return (error as Error).message;
  }
  return undefined;
};

describe("custom rotation statements", () => {
  it("PostgreSQL: each placeholder becomes a quoted name or string, in quotes or standing alone", () => {
    expect(renderRotationStatement("postgres", `ALTER USER "{{username}}" WITH PASSWORD '{{password}}';`, values)).toBe(
      `ALTER USER "app""user'; drop" WITH PASSWORD  E'p''a;ss\\\\word'`,
    );
    expect(renderRotationStatement("postgres", "alter role {{username}} password {{ password }}", values)).toBe(
      `alter role "app""user'; drop" password  E'p''a;ss\\\\word'`,
    );
    expect(
      renderRotationStatement(
        "postgres",
        `ALTER USER "{{username}}" IN DATABASE {{database}} SET search_path = 'a;b' PASSWORD '{{password}}'`,
        { ...values, password: "plain" },
      ),
    ).toBe(`ALTER USER "app""user'; drop" IN DATABASE "db.main" SET search_path = 'a;b' PASSWORD 'plain'`);
  });

  it("MySQL: account names and passwords are strings, a database in backticks a name", () => {
    expect(renderRotationStatement("mysql", `ALTER USER '{{username}}'@'%' IDENTIFIED BY '{{password}}'`, values)).toBe(
      `ALTER USER 'app\\"user\\'; drop'@'%' IDENTIFIED BY 'p\\'a;ss\\\\word'`,
    );
    expect(renderRotationStatement("mysql", "ALTER USER {{username}} IDENTIFIED BY {{password}};  ", values)).toBe(
      `ALTER USER 'app\\"user\\'; drop' IDENTIFIED BY 'p\\'a;ss\\\\word'`,
    );
    expect(renderRotationStatement("mysql", 'SET PASSWORD FOR `{{username}}` = PASSWORD("{{password}}")', values)).toBe(
      "SET PASSWORD FOR `app\"user'; drop` = PASSWORD('p\\'a;ss\\\\word')",
    );
  });

  it("refuses a second statement, outside quotes only", () => {
    const single = "The rotation statement must be a single SQL statement";
    expect(refusal("postgres", `ALTER USER "{{username}}" WITH PASSWORD '{{password}}'; CREATE ROLE x NOLOGIN`)).toBe(
      single,
    );
    expect(refusal("postgres", `ALTER USER "{{username}}" WITH PASSWORD '{{password}}';;`)).toBe(single);
    expect(refusal("mysql", "ALTER USER '{{username}}'@'%' IDENTIFIED BY '{{password}}'; DROP DATABASE keyward")).toBe(
      single,
    );
    expect(refusal("postgres", `ALTER USER "{{username}}" SET x = 'a;b' PASSWORD '{{password}}'`)).toBeUndefined();
    // A backslash escapes a quote in MySQL and in a PostgreSQL E'' string, not in a plain PostgreSQL string.
    expect(refusal("mysql", `ALTER USER {{username}} IDENTIFIED BY {{password}} COMMENT 'it\\'s; fine'`)).toBe(
      undefined,
    );
    expect(refusal("postgres", `ALTER USER {{username}} PASSWORD {{password}} VALID UNTIL 'a\\'; DROP x`)).toBe(single);
    expect(refusal("postgres", `ALTER USER {{username}} PASSWORD {{password}} SET x = E'a\\'; b'`)).toBeUndefined();
  });

  it("refuses other placeholders, missing ones, misplaced ones, comments, dollar quotes and open quotes", () => {
    const base = `ALTER USER "{{username}}" WITH PASSWORD '{{password}}'`;
    expect(refusal("postgres", `${base} {{foo}}`)).toBe("Invalid expression detected in rotation statement");
    expect(refusal("postgres", `${base} {{{username}}}`)).toBe("Invalid expression detected in rotation statement");
    expect(refusal("postgres", `${base} '{{#each x}}'`)).toBe("Invalid expression detected in rotation statement");
    expect(refusal("postgres", `ALTER USER "{{username}}" WITH PASSWORD 'x'`)).toBe(
      "The rotation statement must contain {{username}} and {{password}}",
    );
    for (const misplaced of [
      `ALTER USER "x{{username}}" WITH PASSWORD '{{password}}'`,
      `ALTER USER {{username}} WITH PASSWORD E'{{password}}'`,
      `ALTER USER U&"{{username}}" WITH PASSWORD '{{password}}'`,
      `ALTER USER a{{username}} WITH PASSWORD '{{password}}'`,
    ])
      expect(refusal("postgres", misplaced)).toMatch(/must stand on its own or be the whole of a quoted/);
    expect(refusal("mysql", "ALTER USER _utf8'{{username}}' IDENTIFIED BY '{{password}}'")).toMatch(/stand on its own/);
    expect(refusal("postgres", `${base} -- note`)).toBe("The rotation statement may not contain comments");
    expect(refusal("postgres", `${base} /* note */`)).toBe("The rotation statement may not contain comments");
    expect(refusal("mysql", "ALTER USER '{{username}}' IDENTIFIED BY '{{password}}' # note")).toBe(
      "The rotation statement may not contain comments",
    );
    expect(refusal("mysql", "ALTER USER '{{username}}' IDENTIFIED BY '{{password}}' /*!; DROP x */")).toBe(
      "The rotation statement may not contain comments",
    );
    expect(refusal("postgres", `${base} VALID UNTIL $$x;$$`)).toMatch(/dollar-quoted/);
    expect(refusal("postgres", `ALTER USER "{{username}}" WITH PASSWORD '{{password}}`)).toBe(
      "The rotation statement has an unterminated quoted name or string",
    );
  });
});
