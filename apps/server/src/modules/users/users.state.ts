import type { Tx } from "../../db/transaction";
import type { RoleGrant } from "../authz/membership-roles";
import { addProjectCreator } from "./project-members.service";

declare module "../../context" {
  interface AppDeps {
    /**
     * Make the person who creates a project its member with these roles, inside the creating
     * transaction. Reached through the dependencies so that the projects module does not import this
     * one, which resolves project roles through it.
     */
    addProjectCreator: (trx: Tx, projectId: string, userId: string, roles: RoleGrant[]) => Promise<unknown>;
  }
}

export const createUsersState = () => ({ addProjectCreator });
