import { benchEndpoint } from "./lib/endpoint";
import { PRIVILEGES, preparePrivileges } from "./lib/privileges-fixture";

/**
 * Authenticated GET /api/v2/identity-project-additional-privilege/:id at 32
 * connections. Target: >= 45% of the express + ts-rest ceiling, p99 <= 25 ms.
 */
await benchEndpoint(`GET privilege (${PRIVILEGES} ids)`, preparePrivileges);
