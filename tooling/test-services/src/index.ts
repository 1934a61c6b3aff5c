export { ensureDebianPackage, freePort } from "./debian";
export { PG15_BIN, startPostgres15, type Postgres15, type Postgres15Options } from "./postgres";
export { createFreshDatabase } from "./database";
export { keywardServerBundle, type ServerBundle } from "./server-bundle";
export { listensOn } from "./listens-on";
