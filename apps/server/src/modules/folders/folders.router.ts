import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../context";
import { contextOf } from "../../http/authenticate";
import { ok } from "../../http/respond";
import { createFolder, deleteFolder, getFolderById, listFolders, updateFolder } from "./folder.service";

const s = initServer();

export const foldersRouter = (deps: AppDeps) =>
  s.router(contract.folders, {
    create: async ({ body, req, res }) => ok({ folder: await createFolder(contextOf(deps, req, res), body) }),
    list: async ({ query, req, res }) => ok({ folders: await listFolders(contextOf(deps, req, res), query) }),
    get: async ({ params, req, res }) => ok({ folder: await getFolderById(contextOf(deps, req, res), params.id) }),
    update: async ({ params, body, req, res }) =>
      ok({ folder: await updateFolder(contextOf(deps, req, res), params.folderId, body) }),
    delete: async ({ params, body, req, res }) =>
      ok({ folder: await deleteFolder(contextOf(deps, req, res), params.folderIdOrName, body) }),
  });
