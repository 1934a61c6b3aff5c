export type {
  ConditionValue,
  Conditions,
  PermissionObject,
  PackedRule,
  UnpackedRule as PermissionRule,
} from "@keyward/contract";
export { packRules } from "@keyward/contract";
