import { expect } from "vitest";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { MutatingOperation } from "../../../src/modules/audit/audit-events";
import { createTokenGateway, enrolGateway } from "../../gateways/helpers";
import { createProject, uniqueName, type Tenant } from "../../helpers/tenant";
import { CLOUD_LOGIN_STEPS } from "./cloud-login-rows";
import { DYNAMIC_SECRET_STEPS } from "./dynamic-secret-rows";
import { PKI_STEPS } from "./pki-rows";
import { openEventStream } from "../../helpers/event-stream";
import { ok, type Step } from "./runner";
import { JWT_OIDC_STEPS, WORKLOAD_CONFIG_STEPS } from "./workload-rows";

type PlatformOperation = Extract<
  MutatingOperation,
  | `gateways.${string}`
  | `kms.${string}`
  | `auditLogs.${string}`
  | `auditLogStreams.${string}`
  | `certificateAuthorities.${string}`
  | `certificateProfiles.${string}`
  | `certificates.${string}`
  | `dynamicSecrets.${string}`
  | `dynamicSecretLeases.${string}`
  | `events.${string}`
  | `${"kubernetes" | "oidc" | "gcp" | "jwt" | "aws" | "azure"}Auth.${string}`
>;

const kmsKey = async (tenant: Tenant, keyUsage: "encrypt-decrypt" | "sign-verify" = "encrypt-decrypt") => {
  const project = ok(
    await tenant.admin.projects.create({ body: { projectName: uniqueName("kms"), type: "kms" } }),
  ).project;
  const body =
    keyUsage === "sign-verify"
      ? { projectId: project.id, name: uniqueName("key"), keyUsage, encryptionAlgorithm: "ECC_NIST_P256" as const }
      : { projectId: project.id, name: uniqueName("key") };
  const { key } = ok(await tenant.admin.kms.create({ body }));
  return { project, key };
};

const DATA = Buffer.from("audit coverage").toString("base64");

/** A local receiver that accepts every delivery (streams are checked against it on write). */
let receiver: Promise<string> | undefined;
const receiverUrl = () =>
  (receiver ??= new Promise<string>((resolve) => {
    const server = createServer((req, res) => {
      req.resume();
      req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end("{}"));
    });
    server.unref();
    server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/audit`));
  }));

const stream = async (tenant: Tenant) =>
  ok(
    await tenant.admin.auditLogStreams.create({
      params: { provider: "custom" },
      body: { credentials: { url: await receiverUrl(), headers: [] } },
    }),
  ).auditLogStream;

export const PLATFORM_STEPS: Record<PlatformOperation, Step> = {
  "events.subscribeProjectEvents": async ({ tenant, act }) => {
    const project = await createProject(tenant);
    const register = [{ event: "secret:create", conditions: { environmentSlug: "dev", secretPath: "/" } }];
    const stream = await act(() =>
      openEventStream(tenant.app.baseUrl, tenant.adminToken, { projectId: project.id, register }),
    );
    expect(stream.status).toBe(200);
    // Recorded when the stream ends, here by its client leaving.
    stream.close();
    return { projectId: project.id };
  },
  "gateways.create": async ({ tenant, act }) => {
    const name = uniqueName("gateway");
    const gateway = ok(
      await act(() => tenant.admin.gateways.create({ body: { name, authMethod: { method: "token" } } })),
    );
    return { projectId: null, metadata: { gatewayId: gateway.id, name } };
  },
  "gateways.update": async ({ tenant, act }) => {
    const gateway = await createTokenGateway(tenant);
    ok(await act(() => tenant.admin.gateways.update({ params: { gatewayId: gateway.id }, body: { name: "renamed" } })));
    return { projectId: null, metadata: { gatewayId: gateway.id, name: "renamed" } };
  },
  "gateways.delete": async ({ tenant, act }) => {
    const gateway = await createTokenGateway(tenant);
    ok(await act(() => tenant.admin.gateways.delete({ params: { gatewayId: gateway.id } })));
    return { projectId: null, metadata: { gatewayId: gateway.id } };
  },
  "gateways.mintEnrollmentToken": async ({ tenant, act }) => {
    const gateway = await createTokenGateway(tenant);
    ok(await act(() => tenant.admin.gateways.mintEnrollmentToken({ params: { gatewayId: gateway.id } })));
    return { projectId: null, metadata: { gatewayId: gateway.id } };
  },
  "gateways.revoke": async ({ tenant, act }) => {
    const { gateway } = await enrolGateway(tenant);
    ok(await act(() => tenant.admin.gateways.revoke({ params: { gatewayId: gateway.id } })));
    return { projectId: null, metadata: { gatewayId: gateway.id } };
  },
  "gateways.login": async ({ tenant, act }) => {
    const gateway = await createTokenGateway(tenant);
    const { token } = ok(await tenant.admin.gateways.mintEnrollmentToken({ params: { gatewayId: gateway.id } }));
    ok(await act(() => tenant.anonymous.gateways.login({ body: { method: "token", token } })));
    return {
      projectId: null,
      actor: { type: "machine", metadata: { gatewayId: gateway.id, name: gateway.name } },
      metadata: { gatewayId: gateway.id },
    };
  },
  "gateways.heartbeat": async ({ tenant, act }) => {
    const { gateway, client } = await enrolGateway(tenant);
    ok(await act(() => client.gateways.heartbeat({ body: {} })));
    return {
      projectId: null,
      actor: { type: "machine", metadata: { gatewayId: gateway.id, name: gateway.name } },
      metadata: { gatewayId: gateway.id },
    };
  },
  "gateways.tokenAuthEnroll": async ({ tenant, act }) => {
    const gateway = await createTokenGateway(tenant);
    const { token } = ok(await tenant.admin.gateways.mintEnrollmentToken({ params: { gatewayId: gateway.id } }));
    ok(await act(() => tenant.anonymous.gateways.tokenAuthEnroll({ body: { token } })));
    return {
      projectId: null,
      actor: { type: "machine", metadata: { gatewayId: gateway.id, name: gateway.name } },
      metadata: { gatewayId: gateway.id },
    };
  },
  "gateways.heartbeatV2": async ({ tenant, act }) => {
    const { gateway, client } = await enrolGateway(tenant);
    ok(await act(() => client.gateways.heartbeatV2({ body: {} })));
    return {
      projectId: null,
      actor: { type: "machine", metadata: { gatewayId: gateway.id, name: gateway.name } },
      metadata: { gatewayId: gateway.id },
    };
  },
  "kms.create": async ({ tenant, act }) => {
    const project = ok(
      await tenant.admin.projects.create({ body: { projectName: uniqueName("kms"), type: "kms" } }),
    ).project;
    const name = uniqueName("key");
    const { key } = ok(await act(() => tenant.admin.kms.create({ body: { projectId: project.id, name } })));
    return { projectId: project.id, metadata: { keyId: key.id, name } };
  },
  "kms.update": async ({ tenant, act }) => {
    const { project, key } = await kmsKey(tenant);
    ok(await act(() => tenant.admin.kms.update({ params: { keyId: key.id }, body: { description: "new" } })));
    return { projectId: project.id, metadata: { keyId: key.id } };
  },
  "kms.delete": async ({ tenant, act }) => {
    const { project, key } = await kmsKey(tenant);
    ok(await act(() => tenant.admin.kms.delete({ params: { keyId: key.id } })));
    return { projectId: project.id, metadata: { keyId: key.id } };
  },
  "kms.rotate": async ({ tenant, act }) => {
    const { project, key } = await kmsKey(tenant);
    ok(await act(() => tenant.admin.kms.rotate({ params: { keyId: key.id }, body: {} })));
    return { projectId: project.id, metadata: { keyId: key.id } };
  },
  "kms.encrypt": async ({ tenant, act }) => {
    const { project, key } = await kmsKey(tenant);
    ok(await act(() => tenant.admin.kms.encrypt({ params: { keyId: key.id }, body: { plaintext: DATA } })));
    return { projectId: project.id, metadata: { keyId: key.id } };
  },
  "kms.decrypt": async ({ tenant, act }) => {
    const { project, key } = await kmsKey(tenant);
    const { ciphertext } = ok(await tenant.admin.kms.encrypt({ params: { keyId: key.id }, body: { plaintext: DATA } }));
    ok(await act(() => tenant.admin.kms.decrypt({ params: { keyId: key.id }, body: { ciphertext } })));
    return { projectId: project.id, metadata: { keyId: key.id } };
  },
  "kms.sign": async ({ tenant, act }) => {
    const { project, key } = await kmsKey(tenant, "sign-verify");
    ok(
      await act(() =>
        tenant.admin.kms.sign({
          params: { keyId: key.id },
          body: { signingAlgorithm: "ECDSA_SHA_256", data: DATA, isDigest: false },
        }),
      ),
    );
    return { projectId: project.id, metadata: { keyId: key.id, signingAlgorithm: "ECDSA_SHA_256" } };
  },
  "kms.verify": async ({ tenant, act }) => {
    const { project, key } = await kmsKey(tenant, "sign-verify");
    const body = { signingAlgorithm: "ECDSA_SHA_256" as const, data: DATA, isDigest: false };
    const { signature } = ok(await tenant.admin.kms.sign({ params: { keyId: key.id }, body }));
    ok(await act(() => tenant.admin.kms.verify({ params: { keyId: key.id }, body: { ...body, signature } })));
    return { projectId: project.id, metadata: { keyId: key.id, signingAlgorithm: "ECDSA_SHA_256" } };
  },
  "auditLogs.setProjectRetention": async ({ tenant, act }) => {
    const project = await createProject(tenant);
    ok(
      await act(() =>
        tenant.admin.auditLogs.setProjectRetention({
          params: { projectId: project.id },
          body: { auditLogsRetentionDays: 30 },
        }),
      ),
    );
    return { projectId: project.id, metadata: { projectId: project.id, auditLogsRetentionDays: 30 } };
  },
  "auditLogStreams.create": async ({ tenant, act }) => {
    const url = await receiverUrl();
    const { auditLogStream } = ok(
      await act(() =>
        tenant.admin.auditLogStreams.create({
          params: { provider: "custom" },
          body: { credentials: { url, headers: [] } },
        }),
      ),
    );
    return { projectId: null, metadata: { logStreamId: auditLogStream.id, provider: "custom" } };
  },
  "auditLogStreams.update": async ({ tenant, act }) => {
    const created = await stream(tenant);
    const url = `${await receiverUrl()}/other`;
    ok(
      await act(() =>
        tenant.admin.auditLogStreams.update({
          params: { provider: "custom", logStreamId: created.id },
          body: { credentials: { url } },
        }),
      ),
    );
    return { projectId: null, metadata: { logStreamId: created.id, provider: "custom" } };
  },
  "auditLogStreams.delete": async ({ tenant, act }) => {
    const created = await stream(tenant);
    ok(
      await act(() => tenant.admin.auditLogStreams.delete({ params: { provider: "custom", logStreamId: created.id } })),
    );
    return { projectId: null, metadata: { logStreamId: created.id, provider: "custom" } };
  },
  ...DYNAMIC_SECRET_STEPS,
  ...PKI_STEPS,
  ...WORKLOAD_CONFIG_STEPS,
  ...CLOUD_LOGIN_STEPS,
  ...JWT_OIDC_STEPS,
};
