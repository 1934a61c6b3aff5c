import express, { type RequestHandler } from "express";
import type { AppRouter } from "@ts-rest/core";
import { routesOf } from "./route-entry";

const LOGIN_ROUTE = /^\/api\/v1\/auth\/[^/:]+\/login$/;

/**
 * Form bodies (`application/x-www-form-urlencoded`) on the auth methods' login routes only: the
 * GitHub Action logs in with forms. The fields then meet the same validation as JSON ones (a form
 * carries only strings, a repeated key an array). Every other route keeps reading JSON alone: a form
 * sent anywhere else is refused with 415 (`body-media-type.ts`).
 */
export const loginForms = (contract: AppRouter): RequestHandler => {
  // Express matches paths without regard to case and with one trailing slash allowed.
  const paths = new Set(
    routesOf(contract)
      .map(([route]) => route)
      .filter((route) => route.method === "POST" && LOGIN_ROUTE.test(route.path))
      .map((route) => route.path.toLowerCase()),
  );
  const forms = express.urlencoded({ extended: false, limit: "1mb" });
  return (req, res, next) => {
    if (req.method !== "POST") return next();
    const path = req.path.length > 1 && req.path.endsWith("/") ? req.path.slice(0, -1) : req.path;
    if (!paths.has(path.toLowerCase())) return next();
    forms(req, res, next);
  };
};
