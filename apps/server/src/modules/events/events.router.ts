import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../context";
import { contextOf } from "../../http/authenticate";
import { subscribeProjectEvents } from "./events.service";

const s = initServer();

export const eventsRouter = (deps: AppDeps) =>
  s.router(contract.events, {
    subscribeProjectEvents: async ({ body, headers, req, res }) => {
      const stream = await subscribeProjectEvents(contextOf(deps, req, res), {
        projectId: body.projectId,
        registrations: body.register,
        lastEventId: headers["last-event-id"],
        authorization: req.headers.authorization,
      });
      // ts-rest pipes a stream body into the response, where the stream takes over.
      return { status: 200 as const, body: stream as unknown as string };
    },
  });
