import { randomUUID } from "node:crypto";
import { inTransaction } from "../../db/transaction";
import type {
  CertKeyAlgorithm,
  CreateProfileBody,
  EnrollmentType,
  ListProfilesQuery,
  ProfileDefaults,
  UpdateProfileBody,
} from "@keyward/contract";
import { isForeignKeyViolation, isUniqueViolation, isUuid } from "../../db/errors";
import { BadRequestError, NotFoundError } from "../../errors";
import type { Ability } from "../../permissions";
import { assertCan } from "../authz/guard";
import { getProjectPermission } from "../authz/project-access";
import { findCaById, type CaRow } from "./ca.repository";
import { caNotFound } from "./ca.service";
import { pageVisible, permissionForOwned } from "./pki-access";
import { CONFIG_KEY, CONFIG_LABEL, newConfigRow, prepareConfig, storedConfigSecret } from "./profile-config";
import { toProfileDtos } from "./profile.dto";
import {
  deleteProfileRow,
  findProfileById,
  insertEnrollmentConfig,
  insertProfile,
  listConfigsOfProfiles,
  listProfileKeys,
  listProfilesByIds,
  updateEnrollmentConfig,
  updateProfileRow,
  type ProfileRow,
} from "./profile.repository";
import { keyFamilyOf, signatureFamilyOf } from "./x509";
import { loadIssuingCa } from "./issuance";
import { issueRa } from "./scep/scep-ra.service";
import { insertRa } from "./scep/scep.repository";
import { noteAudit, type RequestContext } from "../../context";

const SUBJECT = "certificate-profiles";

const profileNotFound = (profileId: string) =>
  new NotFoundError(`Certificate profile with ID '${profileId}' not found`);
const duplicateSlug = (slug: string) =>
  new BadRequestError(`A certificate profile with slug ${slug} already exists in this project`);

/** A profile of the caller's organization, with the caller's ability in its project. */
export const loadProfile = async (ctx: RequestContext, profileId: string) => {
  const found = isUuid(profileId) ? await findProfileById(ctx.deps.db, profileId) : undefined;
  const permission = await permissionForOwned(ctx, found, `Certificate profile with ID '${profileId}' not found`);
  const { org_id: _org, ...profile } = found!;
  return { profile, ...permission };
};

const profileDto = async (ctx: RequestContext, profileId: string) => {
  const row = (await listProfilesByIds(ctx.deps.db, [profileId]))[0];
  if (!row) throw profileNotFound(profileId);
  return (await toProfileDtos(ctx.deps, [row]))[0]!;
};

/**
 * Profiles whose certificates are CA certificates let every issue-cert holder mint a sub-CA under the
 * profile's CA, so writing one needs what creating an intermediate needs: sign-intermediate on that CA.
 */
const assertMaySignCaCertificates = (
  ability: Ability,
  defaults: ProfileDefaults | null | undefined,
  ca: CaRow | undefined,
) => {
  if (ca && defaults?.basicConstraints?.isCA)
    assertCan(ability, "sign-intermediate", "certificate-authorities", { name: ca.name });
};

/** Defaults that cannot work with the issuer: a signature its key cannot make, or a CA certificate the CA may not sign. */
const assertDefaultsFitIssuer = (defaults: ProfileDefaults | null | undefined, ca: CaRow | undefined) => {
  if (!defaults) return;
  const signerKey = (ca?.key_algorithm ?? defaults.keyAlgorithm ?? "RSA_2048") as CertKeyAlgorithm;
  if (defaults.signatureAlgorithm && signatureFamilyOf(defaults.signatureAlgorithm) !== keyFamilyOf(signerKey)) {
    throw new BadRequestError(
      `Signature algorithm ${defaults.signatureAlgorithm} cannot be made with the ${ca ? "CA's" : "certificate's"} ${signerKey} key`,
    );
  }
  if (ca && defaults.basicConstraints?.isCA) {
    if (ca.max_path_length === 0)
      throw new BadRequestError(`The CA ${ca.name} has a path length of 0 and cannot issue CA certificates`);
    const pathLength = defaults.basicConstraints.pathLength;
    if (ca.max_path_length > 0 && pathLength !== undefined && pathLength > ca.max_path_length - 1) {
      throw new BadRequestError(
        `basicConstraints.pathLength must be at most ${ca.max_path_length - 1} under the CA ${ca.name}`,
      );
    }
  }
};

/** A SCEP profile's first RA certificate, from its CA, which must be able to sign now. */
const firstScepRa = async (ctx: RequestContext, profileId: string, slug: string, ca: CaRow | undefined) => {
  if (!ca) throw new BadRequestError("SCEP enrollment needs a CA (issuerType ca)");
  const now = new Date();
  const signing = await loadIssuingCa(ctx.deps.db, { issuer_type: "ca", ca_id: ca.id, slug } as ProfileRow, now);
  return issueRa(ctx.deps, { id: profileId, slug }, signing!, now);
};

export const createProfile = async (ctx: RequestContext, body: CreateProfileBody) => {
  const { project, ability } = await getProjectPermission(ctx, body.projectId, "cert-manager");
  assertCan(ability, "create", SUBJECT, { slug: body.slug });
  let ca: CaRow | undefined;
  if (body.caId) {
    ca = isUuid(body.caId) ? await findCaById(ctx.deps.db, body.caId) : undefined;
    if (!ca || ca.project_id !== project.id) throw caNotFound(body.caId);
  }
  assertMaySignCaCertificates(ability, body.defaults, ca);
  assertDefaultsFitIssuer(body.defaults, ca);
  const prepared = prepareConfig(body.enrollmentType, body);
  const newId = randomUUID();
  const ra = body.enrollmentType === "scep" ? await firstScepRa(ctx, newId, body.slug, ca) : undefined;
  try {
    const profileId = await inTransaction(ctx, async (trx) => {
      const { id } = await insertProfile(trx, {
        id: newId,
        project_id: project.id,
        ca_id: ca?.id ?? null,
        slug: body.slug,
        description: body.description ?? null,
        enrollment_type: body.enrollmentType,
        issuer_type: body.issuerType,
        defaults: body.defaults ? JSON.stringify(body.defaults) : null,
        external_configs: body.externalConfigs ? JSON.stringify(body.externalConfigs) : null,
      });
      if (prepared) await insertEnrollmentConfig(trx, await newConfigRow(ctx, id, body.enrollmentType, prepared));
      if (ra) await insertRa(trx, ra);
      noteAudit(ctx, { metadata: { profileId: id } });
      return id;
    });
    return profileDto(ctx, profileId);
  } catch (error) {
    if (isUniqueViolation(error)) throw duplicateSlug(body.slug);
    if (isForeignKeyViolation(error) && ca) throw caNotFound(ca.id);
    throw error;
  }
};

export const getProfile = async (ctx: RequestContext, profileId: string) => {
  const { profile, ability } = await loadProfile(ctx, profileId);
  assertCan(ability, "read", SUBJECT, { slug: profile.slug });
  return (await toProfileDtos(ctx.deps, [profile]))[0]!;
};

export const listProfiles = async (ctx: RequestContext, query: ListProfilesQuery) => {
  const { project, ability } = await getProjectPermission(ctx, query.projectId, "cert-manager");
  assertCan(ability, "read", SUBJECT);
  // A CA id that cannot exist matches nothing.
  if (query.caId !== undefined && !isUuid(query.caId)) return { certificateProfiles: [], totalCount: 0 };
  const keys = await listProfileKeys(ctx.deps.db, project.id, query);
  const { page, totalCount } = pageVisible(
    keys,
    (k) => ({ slug: k.slug }),
    (object) => ability.can("read", SUBJECT, object),
    query.offset,
    query.limit,
  );
  const rows = new Map(
    (
      await listProfilesByIds(
        ctx.deps.db,
        page.map((k) => k.id),
      )
    ).map((r) => [r.id, r]),
  );
  const ordered = page.flatMap((k) => (rows.has(k.id) ? [rows.get(k.id)!] : []));
  return { certificateProfiles: await toProfileDtos(ctx.deps, ordered), totalCount };
};

export const updateProfile = async (ctx: RequestContext, profileId: string, body: UpdateProfileBody) => {
  const { profile, ability } = await loadProfile(ctx, profileId);
  assertCan(ability, "edit", SUBJECT, { slug: profile.slug });
  if (body.slug !== undefined && body.slug !== profile.slug) assertCan(ability, "edit", SUBJECT, { slug: body.slug });
  const type: EnrollmentType = profile.enrollment_type;
  for (const other of Object.keys(CONFIG_KEY) as EnrollmentType[]) {
    if (other !== type && body[CONFIG_KEY[other]] !== undefined) {
      throw new BadRequestError(
        `${CONFIG_LABEL[other]} configuration cannot be set on a profile with ${type} enrollment`,
      );
    }
  }
  if (body.defaults) {
    const ca = profile.ca_id ? await findCaById(ctx.deps.db, profile.ca_id) : undefined;
    assertMaySignCaCertificates(ability, body.defaults, ca);
    assertDefaultsFitIssuer(body.defaults, ca);
  }
  const stored = (await listConfigsOfProfiles(ctx.deps.db, [profile.id]))[0];
  const prepared =
    body[CONFIG_KEY[type]] !== undefined ? prepareConfig(type, body, stored?.has_secret ?? false) : undefined;
  try {
    await inTransaction(ctx, async (trx) => {
      await updateProfileRow(trx, profile.id, {
        ...(body.slug !== undefined ? { slug: body.slug } : {}),
        ...(body.description !== undefined ? { description: body.description } : {}),
        ...(body.defaults !== undefined
          ? { defaults: body.defaults === null ? null : JSON.stringify(body.defaults) }
          : {}),
        ...(body.externalConfigs !== undefined
          ? { external_configs: body.externalConfigs === null ? null : JSON.stringify(body.externalConfigs) }
          : {}),
      });
      if (!prepared) return;
      if (!stored) {
        await insertEnrollmentConfig(trx, await newConfigRow(ctx, profile.id, type, prepared));
        return;
      }
      // A static SCEP challenge switched to dynamic drops the stored password.
      const dropSecret = type === "scep" && prepared.settings.challengeType === "dynamic";
      const secret = prepared.secret ? await storedConfigSecret(ctx, type, stored.id, prepared.secret) : undefined;
      await updateEnrollmentConfig(trx, stored.id, JSON.stringify(prepared.settings), dropSecret ? null : secret);
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw duplicateSlug(body.slug ?? profile.slug);
    throw error;
  }
  return profileDto(ctx, profile.id);
};

export const deleteProfile = async (ctx: RequestContext, profileId: string) => {
  const { profile, ability } = await loadProfile(ctx, profileId);
  assertCan(ability, "delete", SUBJECT, { slug: profile.slug });
  const dto = (await toProfileDtos(ctx.deps, [profile]))[0]!;
  await inTransaction(ctx, (trx) => deleteProfileRow(trx, profile.id));
  return dto;
};
