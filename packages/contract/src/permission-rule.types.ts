import type {
  ConditionOperator,
  PROJECT_PERMISSION_CATALOG,
  PROJECT_PERMISSION_CONDITIONS,
  ProjectPermissionSubject,
} from "./permission-catalog";

/** The actions one subject accepts. */
export type ProjectPermissionAction<S extends ProjectPermissionSubject> =
  (typeof PROJECT_PERMISSION_CATALOG)[S][number];

type ElemMatchPart = string | { $eq?: string; $ne?: string; $in?: string[] };

/** What one operator takes as its value. */
type OperatorValue<O extends ConditionOperator> = O extends "$in" | "$all"
  ? string[]
  : O extends "$elemMatch"
    ? { key?: ElemMatchPart; value?: ElemMatchPart }
    : string;

/** A field's condition: the operators it allows, or a plain string where `$eq` is one of them. */
type FieldCondition<Ops extends ConditionOperator> =
  ("$eq" extends Ops ? string : never) | { [O in Ops]?: OperatorValue<O> };

type ConditionTable = typeof PROJECT_PERMISSION_CONDITIONS;

/** The condition keys one subject has; subjects without conditions take none. */
export type ProjectPermissionConditions<S extends ProjectPermissionSubject> = S extends keyof ConditionTable
  ? {
      [F in keyof ConditionTable[S]]?: FieldCondition<
        ConditionTable[S][F] extends { operators: readonly (infer O extends ConditionOperator)[] } ? O : never
      >;
    }
  : Record<string, never>;

/** A project permission rule as a request sends it, exact per subject: a wrong action or condition key does not compile. */
export type ProjectPermissionRule = {
  [S in ProjectPermissionSubject]: {
    subject: S;
    action: ProjectPermissionAction<S> | ProjectPermissionAction<S>[];
    inverted?: boolean;
    conditions?: ProjectPermissionConditions<S>;
  };
}[ProjectPermissionSubject];
