import { PermissionBoundaryError } from "../../errors";
import { missingPermissions, type Ability, type PermissionRule } from "../../permissions";

export { missingPermissions };

/** 403 PermissionBoundaryError listing what the actor would grant without holding it. */
export const assertWithinBoundary = (actor: Ability, granted: readonly PermissionRule[], message: string) => {
  const missing = missingPermissions(actor, granted);
  if (missing.length > 0) {
    throw new PermissionBoundaryError(
      `${message}. Actor privilege level is not high enough to perform this action`,
      missing,
    );
  }
};
