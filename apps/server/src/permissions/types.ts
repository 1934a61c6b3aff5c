/** A condition on one field: a plain string means equality. */
export type ConditionValue =
  | string
  | {
      $eq?: string;
      $ne?: string;
      $in?: string[];
      $all?: string[];
      $glob?: string;
      $elemMatch?: Record<string, ConditionValue>;
    };

export type Conditions = Record<string, ConditionValue>;

/** The unpacked rule form: `action` always an array, `inverted` always a boolean. */
export type PermissionRule = {
  subject: string;
  action: string[];
  inverted: boolean;
  conditions?: Conditions;
};

/** What an object-level check is evaluated against: field name to a string or list of strings. */
export type PermissionObject = Record<string, string | string[] | Record<string, string>[] | undefined>;
