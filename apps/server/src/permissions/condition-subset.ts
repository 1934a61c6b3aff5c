import { LIST_VALUED_CONDITION_FIELDS } from "@keyward/contract";
import { globMatches } from "./glob";
import { isGlobSubsetOfGlob } from "./glob-subset";
import { conditionHasTemplate } from "./templates";
import type { ConditionValue, Conditions } from "./types";

/**
 * Set reasoning over conditions, for the boundary check: does one condition imply another, can two
 * conditions both hold? Both answers are sound and conservative: "implies" may say no to a true
 * implication, "disjoint" may say no to truly disjoint conditions; neither ever widens a grant.
 * Scalar fields hold one string (or are missing); list fields (secretTags, metadata) hold many.
 * Conditions holding identity templates are treated as unknown values.
 */
type Ops = Exclude<ConditionValue, string>;

const opsOf = (condition: ConditionValue): Ops => (typeof condition === "string" ? { $eq: condition } : condition);
const isList = (field: string) => LIST_VALUED_CONDITION_FIELDS.includes(field);
const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Does every value satisfying `r` satisfy the single operator `op: expected`? */
const impliesOp = (r: Ops, op: string, expected: unknown, list: boolean): boolean => {
  switch (op) {
    case "$eq": {
      const x = expected as string;
      return (
        r.$eq === x ||
        (r.$in !== undefined && r.$in.length > 0 && r.$in.every((v) => v === x)) ||
        (r.$all?.includes(x) ?? false)
      );
    }
    case "$ne": {
      const x = expected as string;
      if (r.$ne === x) return true;
      if (list) return false;
      return (
        (r.$eq !== undefined && r.$eq !== x) ||
        (r.$in !== undefined && !r.$in.includes(x)) ||
        (r.$glob !== undefined && !globMatches(r.$glob, x))
      );
    }
    case "$in": {
      const allowed = expected as string[];
      return (
        (r.$eq !== undefined && allowed.includes(r.$eq)) ||
        (r.$in !== undefined && r.$in.every((v) => allowed.includes(v))) ||
        (r.$all !== undefined && r.$all.some((v) => allowed.includes(v)))
      );
    }
    case "$all": {
      const needed = expected as string[];
      return (
        (r.$all !== undefined && needed.every((v) => r.$all!.includes(v))) ||
        (r.$eq !== undefined && needed.length > 0 && needed.every((v) => v === r.$eq))
      );
    }
    case "$glob": {
      const glob = expected as string;
      return (
        (r.$eq !== undefined && globMatches(glob, r.$eq)) ||
        (r.$in !== undefined && r.$in.every((v) => globMatches(glob, v))) ||
        (r.$glob !== undefined && isGlobSubsetOfGlob(r.$glob, glob)) ||
        (r.$all !== undefined && r.$all.some((v) => globMatches(glob, v)))
      );
    }
    case "$elemMatch":
      return r.$elemMatch !== undefined && sameJson(r.$elemMatch, expected);
    default:
      return false;
  }
};

/** Every object matching `granted` on this field also matches `held` on it. */
export const conditionImplies = (field: string, granted: ConditionValue, held: ConditionValue): boolean => {
  // A template's value is only known per identity: it implies nothing, and only "no condition" covers it.
  if (conditionHasTemplate(granted) || conditionHasTemplate(held)) return false;
  const r = opsOf(granted);
  const list = isList(field);
  return Object.entries(opsOf(held)).every(
    ([op, expected]) => expected === undefined || impliesOp(r, op, expected, list),
  );
};

/** Conditions `granted` (all fields) imply conditions `held`; no held conditions means everything. */
export const conditionsCover = (granted: Conditions | undefined, held: Conditions | undefined): boolean => {
  if (!held) return true;
  return Object.entries(held).every(([field, condition]) => {
    const g = granted?.[field];
    return g !== undefined && conditionImplies(field, g, condition);
  });
};

/** Two single operators that no one value satisfies together (order-insensitive). */
const contradicts = (a: [string, unknown], b: [string, unknown], list: boolean): boolean => {
  const [opA, va] = a;
  const [opB, vb] = b;
  const pair = (x: string, y: string) =>
    opA === x && opB === y ? ([va, vb] as const) : opA === y && opB === x ? ([vb, va] as const) : undefined;
  const eqNe = pair("$eq", "$ne");
  if (eqNe) return eqNe[0] === eqNe[1];
  const allNe = pair("$all", "$ne");
  if (allNe) return (allNe[0] as string[]).includes(allNe[1] as string);
  if (list) return false;
  const eqEq = pair("$eq", "$eq");
  if (eqEq) return eqEq[0] !== eqEq[1];
  const eqIn = pair("$eq", "$in");
  if (eqIn) return !(eqIn[1] as string[]).includes(eqIn[0] as string);
  const eqGlob = pair("$eq", "$glob");
  if (eqGlob) return !globMatches(eqGlob[1] as string, eqGlob[0] as string);
  const eqAll = pair("$eq", "$all");
  if (eqAll) return (eqAll[1] as string[]).some((v) => v !== eqAll[0]);
  const inIn = pair("$in", "$in");
  if (inIn) return !(inIn[0] as string[]).some((v) => (inIn[1] as string[]).includes(v));
  const inGlob = pair("$in", "$glob");
  if (inGlob) return !(inGlob[0] as string[]).some((v) => globMatches(inGlob[1] as string, v));
  const inNe = pair("$in", "$ne");
  if (inNe) return (inNe[0] as string[]).every((v) => v === inNe[1]);
  return false;
};

/** Can one object match both rule conditions? `true` unless some shared field rules it out. */
export const conditionsMayOverlap = (a: Conditions | undefined, b: Conditions | undefined): boolean => {
  if (!a || !b) return true;
  for (const field of Object.keys(a)) {
    const ca = a[field];
    const cb = b[field];
    if (ca === undefined || cb === undefined || conditionHasTemplate(ca) || conditionHasTemplate(cb)) continue;
    const list = isList(field);
    const opsA = Object.entries(opsOf(ca)).filter(([, v]) => v !== undefined);
    const opsB = Object.entries(opsOf(cb)).filter(([, v]) => v !== undefined);
    if (opsA.some((x) => opsB.some((y) => contradicts(x, y, list)))) return false;
  }
  return true;
};
