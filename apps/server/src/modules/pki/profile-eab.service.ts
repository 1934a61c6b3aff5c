import type { RequestContext } from "../../context";
import { BadRequestError, NotFoundError } from "../../errors";
import { assertCan } from "../authz/guard";
import { getProjectPermission } from "../authz/project-access";
import { encryptConfigSecret, newEabSecret } from "./profile-config";
import { toProfileDtos } from "./profile.dto";
import { findConfigSecret, findProfileIdBySlug, listProfilesByIds, updateEnrollmentConfig } from "./profile.repository";
import { loadProfile } from "./profile.service";
import { inTransaction } from "../../db/transaction";

const SUBJECT = "certificate-profiles";

export const getProfileBySlug = async (ctx: RequestContext, projectId: string, slug: string) => {
  const { project, ability } = await getProjectPermission(ctx, projectId, "cert-manager");
  const id = await findProfileIdBySlug(ctx.deps.db, project.id, slug.toLowerCase());
  const row = id ? (await listProfilesByIds(ctx.deps.db, [id]))[0] : undefined;
  if (!row) throw new NotFoundError(`Certificate profile with slug '${slug}' not found`);
  assertCan(ability, "read", SUBJECT, { slug: row.slug });
  return (await toProfileDtos(ctx.deps, [row]))[0]!;
};

/** The ACME configuration of a profile; the key id clients send is the profile id. */
const loadAcmeConfig = async (ctx: RequestContext, profileId: string, action: string) => {
  const { profile, ability } = await loadProfile(ctx, profileId);
  assertCan(ability, action, SUBJECT, { slug: profile.slug });
  if (profile.enrollment_type !== "acme") {
    throw new BadRequestError(`Profile ${profile.slug} does not use ACME enrollment`);
  }
  const config = await findConfigSecret(ctx.deps.db, profile.id, "acme");
  if (!config) throw new BadRequestError(`Profile ${profile.slug} has no ACME configuration`);
  return { profile, config };
};

export const revealEabSecret = async (ctx: RequestContext, profileId: string) => {
  const { profile, config } = await loadAcmeConfig(ctx, profileId, "reveal-acme-eab-secret");
  let secret = config.encrypted_secret
    ? ctx.deps.secretBox.decrypt(config.encrypted_secret, `pki-enrollment:${config.id}`)
    : undefined;
  if (!secret) {
    // A profile stored before ACME was served has no key yet: make it on first reveal.
    secret = newEabSecret();
    await updateEnrollmentConfig(
      ctx.deps.db,
      config.id,
      JSON.stringify(config.settings),
      encryptConfigSecret(ctx, config.id, secret),
    );
  }
  return { eabKid: profile.id, eabSecret: secret };
};

export const rotateEabSecret = async (ctx: RequestContext, profileId: string) => {
  const { profile, config } = await loadAcmeConfig(ctx, profileId, "rotate-acme-eab-secret");
  const secret = newEabSecret();
  await inTransaction(ctx, (trx) =>
    updateEnrollmentConfig(
      trx,
      config.id,
      JSON.stringify(config.settings),
      encryptConfigSecret(ctx, config.id, secret),
    ),
  );
  return { eabKid: profile.id, eabSecret: secret };
};
