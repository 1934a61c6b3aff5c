import { useState } from "react";
import type { ZodTypeAny, z } from "zod";

export type FieldErrors = Record<string, string>;

/**
 * Check form values against the contract's own schema before sending, so the console and the server
 * agree on every rule; errors are keyed by the first path segment (the field).
 */
export const validate = <S extends ZodTypeAny>(
  schema: S,
  values: unknown,
): { data: z.output<S>; errors: null } | { data: null; errors: FieldErrors } => {
  const result = schema.safeParse(values);
  if (result.success) return { data: result.data as z.output<S>, errors: null };
  const errors: FieldErrors = {};
  for (const issue of result.error.issues) {
    const key = String(issue.path[0] ?? "form");
    errors[key] ??= issue.message;
  }
  return { data: null, errors };
};

export const useFieldErrors = () => useState<FieldErrors>({});
