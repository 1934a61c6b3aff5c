import { afterEach } from "vitest";
import { SECRET_EVENT_TYPES } from "@keyward/contract";
import { openEventStream, type OpenedStream } from "../helpers/event-stream";
import type { Tenant } from "../helpers/tenant";

/** Every event type registered on one folder (and below) of an environment, as the Kubernetes operator does. */
export const on = (secretPath: string, environmentSlug = "dev") =>
  SECRET_EVENT_TYPES.map((event) => ({ event, conditions: { environmentSlug, secretPath } }));

/**
 * Opens event streams for the tests of one file, each closed after the test that opened it. A body
 * without `register` sends none.
 */
export const trackedStreams = () => {
  const opened: OpenedStream[] = [];
  afterEach(() => {
    for (const stream of opened.splice(0)) stream.close();
  });
  return async (
    tenant: Tenant,
    token: string,
    body: { projectId: string; register?: unknown },
    headers: Record<string, string> = {},
  ) => {
    const stream = await openEventStream(tenant.app.baseUrl, token, { ...body, register: body.register }, headers);
    opened.push(stream);
    return stream;
  };
};

/** Creates a secret as the tenant's admin. */
export const writeSecret = (
  tenant: Tenant,
  projectId: string,
  at: { environment: string; secretPath: string },
  key: string,
  value = "canary-value-0001",
) =>
  tenant.admin.secretsV4.create({
    params: { secretName: key },
    body: { projectId, environment: at.environment, secretPath: at.secretPath, secretValue: value },
  });
