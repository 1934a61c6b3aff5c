import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PermissionRule } from "../../src/permissions";
import { ensureDebianPackages } from "../services/debian";
import { createProject, createTenant, expectOk, uniqueName, type Tenant } from "../helpers/tenant";

/** The Debian openssl binary the chain checks run; installed when missing. */
export const ensureOpenssl = () => ensureDebianPackages("/usr/bin/openssl", ["openssl"]);

const workDir = () => mkdtempSync(join(tmpdir(), "keyward-pki-"));

export type OpensslResult = { ok: boolean; output: string };

/** `openssl <args>` with the named PEM texts written to files first; `{name}` in args is that file's path. */
export const openssl = (args: string[], files: Record<string, string> = {}): OpensslResult => {
  const dir = workDir();
  const paths: Record<string, string> = {};
  for (const [name, text] of Object.entries(files)) {
    paths[name] = join(dir, `${name}.pem`);
    writeFileSync(paths[name], text.endsWith("\n") ? text : `${text}\n`);
  }
  const resolved = args.map((a) => a.replace(/\{(\w+)\}/g, (_m, name: string) => paths[name] ?? join(dir, name)));
  const run = spawnSync("/usr/bin/openssl", resolved, { encoding: "utf8", cwd: dir });
  return { ok: run.status === 0, output: `${run.stdout}${run.stderr}` };
};

/** `openssl verify` of a leaf against a trusted root, with intermediates as untrusted helpers. */
export const verifyChain = (leaf: string, root: string, intermediates = "", extra: string[] = [], crls = "") => {
  const files: Record<string, string> = { leaf, root };
  const args = ["verify", "-CAfile", "{root}"];
  if (intermediates.trim()) {
    files.untrusted = intermediates;
    args.push("-untrusted", "{untrusted}");
  }
  if (crls) {
    files.crls = crls;
    args.push("-CRLfile", "{crls}");
  }
  return openssl([...args, ...extra, "{leaf}"], files);
};

/** Text form of a certificate, as openssl prints it. */
export const describeCertificate = (pem: string) =>
  openssl(["x509", "-noout", "-text", "-in", "{cert}"], { cert: pem }).output;

/** A fresh EC P-256 key and a CSR for it, made by openssl. */
export const makeCsr = (subject: string, keyArgs = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"]) => {
  const dir = workDir();
  const run = spawnSync(
    "/usr/bin/openssl",
    ["req", "-new", ...keyArgs, "-nodes", "-keyout", "key.pem", "-subj", subject, "-out", "csr.pem"],
    {
      cwd: dir,
      encoding: "utf8",
    },
  );
  if (run.status !== 0) throw new Error(run.stderr);
  return { csr: readFileSync(join(dir, "csr.pem"), "utf8"), key: readFileSync(join(dir, "key.pem"), "utf8") };
};

export const createCertProject = (tenant: Tenant) => createProject(tenant, "cert-manager");

export const createRootCa = async (
  tenant: Tenant,
  projectId: string,
  configuration: Record<string, unknown> = {},
  name = uniqueName("root"),
) =>
  expectOk(
    await tenant.admin.certificateAuthorities.create({
      body: {
        projectId,
        name,
        configuration: {
          type: "root",
          commonName: `${name} Root`,
          organization: "Keyward Test",
          keyAlgorithm: "EC_prime256v1",
          ...configuration,
        },
      },
    }),
  ).certificateAuthority;

export const createIntermediateCa = async (
  tenant: Tenant,
  projectId: string,
  parentCaId: string,
  configuration: Record<string, unknown> = {},
) => {
  const name = uniqueName("issuing");
  return expectOk(
    await tenant.admin.certificateAuthorities.create({
      body: {
        projectId,
        name,
        configuration: {
          type: "intermediate",
          parentCaId,
          commonName: `${name} Issuing`,
          keyAlgorithm: "EC_prime256v1",
          ...configuration,
        },
      },
    }),
  ).certificateAuthority;
};

export const createApiProfile = async (
  tenant: Tenant,
  projectId: string,
  caId: string,
  extra: Record<string, unknown> = {},
) =>
  expectOk(
    await tenant.admin.certificateProfiles.create({
      body: { projectId, caId, slug: uniqueName("web"), enrollmentType: "api", issuerType: "ca", ...extra },
    }),
  ).certificateProfile;

/** A project role with exactly these rules, written straight to the roles table (custom roles are another module's API). */
export const createCustomRole = async (tenant: Tenant, projectId: string, rules: PermissionRule[]) => {
  const slug = uniqueName("pki-role");
  await tenant.app.deps.db
    .insertInto("project_roles")
    .values({ project_id: projectId, name: slug, slug, permissions: JSON.stringify(rules) })
    .execute();
  return slug;
};

/** A fresh tenant with a cert-manager project and an active root CA: what most profile tests start from. */
export const setupCaProject = async () => {
  const tenant = await createTenant();
  const project = await createCertProject(tenant);
  const ca = await createRootCa(tenant, project.id);
  return { tenant, project, ca };
};

/** Create a profile from a loosely typed body, so tests can send invalid shapes too. */
export const createProfileRaw = (tenant: Tenant, body: Record<string, unknown>) =>
  tenant.admin.certificateProfiles.create({ body: body as never });

/** A cert-manager project, its root CA and a profile enrolling through `enrollmentType` (ACME, EST or API). */
export const createEnrolmentProfile = async (
  tenant: Tenant,
  enrollmentType: "acme" | "est" | "api",
  extra: Record<string, unknown> = {},
) => {
  const project = await createCertProject(tenant);
  const ca = await createRootCa(tenant, project.id);
  const profile = expectOk(
    await tenant.admin.certificateProfiles.create({
      body: {
        projectId: project.id,
        caId: ca.id,
        slug: uniqueName(enrollmentType),
        enrollmentType,
        issuerType: "ca",
        ...extra,
      } as never,
    }),
  ).certificateProfile;
  return { project, ca, profile };
};

/** An ACME profile with its external account binding and directory URL on `baseUrl`. */
export const createAcmeProfile = async (tenant: Tenant, baseUrl: string, extra: Record<string, unknown> = {}) => {
  const { project, ca, profile } = await createEnrolmentProfile(tenant, "acme", extra);
  const eab = expectOk(
    await tenant.admin.certificateProfiles.revealAcmeEabSecret({ params: { profileId: profile.id } }),
  );
  const caPem = expectOk(await tenant.admin.certificateAuthorities.getCertificate({ params: { caId: ca.id } }));
  return { project, ca, profile, eab, caPem, directoryUrl: `${baseUrl}${profile.acmeConfig!.directoryUrl}` };
};

type IssueResponse = Awaited<ReturnType<Tenant["admin"]["certificates"]["issue"]>>;

/** The answer to an issue request in Keyward's own form (top-level fields): the flat certificate. */
export const expectIssued = (res: IssueResponse) => {
  const body = expectOk(res);
  if (!("issuingCaCertificate" in body)) throw new Error(`expected the flat answer, got ${JSON.stringify(body)}`);
  return body;
};

/** A project with root -> issuing CA and an API profile on the issuing CA. */
export const issuingHierarchy = async (profileExtra: Record<string, unknown> = {}) => {
  const tenant = await createTenant();
  const project = await createCertProject(tenant);
  const root = await createRootCa(tenant, project.id);
  const issuing = await createIntermediateCa(tenant, project.id, root.id);
  const profile = await createApiProfile(tenant, project.id, issuing.id, profileExtra);
  const rootPem = expectOk(
    await tenant.admin.certificateAuthorities.getCertificate({ params: { caId: root.id } }),
  ).certificate;
  return { tenant, project, root, issuing, profile, rootPem };
};
