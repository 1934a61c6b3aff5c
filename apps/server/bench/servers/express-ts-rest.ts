import { createServer } from "node:http";
import express from "express";
import { initContract } from "@ts-rest/core";
import { createExpressEndpoints, initServer } from "@ts-rest/express";
import { IdentitySchema } from "@keyward/contract";
import { z } from "zod";
import { IDENTITY_FIXTURE } from "./fixture";
import { listenForBench } from "./announce";

/** Baseline and framework ceiling: express + ts-rest with request and response validation, no database. */
const c = initContract();
const route = c.router({
  get: {
    method: "GET",
    path: "/api/v1/identities/:identityId",
    pathParams: z.object({ identityId: z.string().trim().min(1) }),
    responses: { 200: z.object({ identity: IdentitySchema }) },
  },
});
const s = initServer();
const app = express();
app.disable("x-powered-by");
app.set("etag", false);
app.use(express.json({ limit: "1mb" }));
createExpressEndpoints(
  route,
  s.router(route, { get: async () => ({ status: 200 as const, body: { identity: IDENTITY_FIXTURE } }) }),
  app,
  { responseValidation: true, logInitialization: false },
);
listenForBench(createServer(app));
