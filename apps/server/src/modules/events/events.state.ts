import type { RequestContext } from "../../context";
import type { Tx } from "../../db/transaction";
import { createEventHub, type EventHub } from "./event-hub";
import { noteChange, type NotedChange } from "./event-log";

declare module "../../context" {
  interface AppDeps {
    /** This process's project event streams, fed from the events log. */
    eventHub: EventHub;
    /**
     * Note a secret change (or a folder's imports changing) for the events stream, inside its
     * transaction. Reached through the dependencies so that the modules that write secrets and
     * imports do not import this one, which reads folders and imports.
     */
    noteSecretEvent: (ctx: Pick<RequestContext, "deps">, trx: Tx, change: NotedChange) => void;
  }
}

export const createEventsState = () => ({
  eventHub: createEventHub(),
  noteSecretEvent: noteChange,
});
