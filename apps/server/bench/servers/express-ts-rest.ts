import express from "express";
import { initContract } from "@ts-rest/core";
import { createExpressEndpoints, initServer } from "@ts-rest/express";
import { IdentitySchema } from "@keyward/contract";
import { z } from "zod";
import { IDENTITY_FIXTURE } from "./fixture";

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
const server = app.listen(0, "127.0.0.1", () => {
  const address = server.address();
  console.log(`listening ${typeof address === "object" && address ? address.port : 0}`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
