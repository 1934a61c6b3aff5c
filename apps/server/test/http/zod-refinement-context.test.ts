import { contract } from "@keyward/contract";
import { z } from "zod";
import { describe, expect, it } from "vitest";
import { hasFastProperties } from "../helpers/v8-layout";

/**
 * zod is patched (patches/zod@3.25.76.patch): the context a transform or refinement receives has
 * `path` as a plain member instead of a getter. An object literal with a getter is built by V8 in
 * dictionary mode, and every parse's context then outlived young-generation collections (a secret
 * read's query: ~2 MB promoted per scavenge). These tests fail on an unpatched install.
 */
describe("zod's refinement context", () => {
  it("is a plain object whose path is a member, and still names where the value sits", () => {
    const seen: { descriptor?: PropertyDescriptor; path: (string | number)[]; fast: boolean }[] = [];
    const schema = z.object({
      outer: z.object({
        inner: z.string().superRefine((value, ctx) => {
          seen.push({
            descriptor: Object.getOwnPropertyDescriptor(ctx, "path"),
            path: ctx.path,
            fast: hasFastProperties(ctx),
          });
          if (value === "bad") ctx.addIssue({ code: z.ZodIssueCode.custom, message: "not this one" });
        }),
      }),
    });

    expect(schema.safeParse({ outer: { inner: "good" } }).success).toBe(true);
    const failed = schema.safeParse({ outer: { inner: "bad" } });
    expect(failed.success).toBe(false);
    expect(failed.error?.issues).toEqual([{ code: "custom", message: "not this one", path: ["outer", "inner"] }]);
    for (const entry of seen) {
      expect(entry.descriptor).toMatchObject({ value: ["outer", "inner"], enumerable: true });
      expect(entry.descriptor && "get" in entry.descriptor).toBe(false);
      expect(entry.path).toEqual(["outer", "inner"]);
      expect(entry.fast).toBe(true);
    }
    expect(seen).toHaveLength(2);
  });

  it("reports the contract's refinements where they failed", () => {
    const query = contract.secretsV4.get.query;
    expect(query.safeParse({ projectId: "p", secretPath: "/app", environment: "dev" }).success).toBe(true);
    const failed = query.safeParse({ projectId: "p", secretPath: "/app/no spaces", environment: "dev" });
    expect(failed.success).toBe(false);
    expect(failed.error?.issues.map((i) => i.path)).toEqual([["secretPath"]]);
  });
});
