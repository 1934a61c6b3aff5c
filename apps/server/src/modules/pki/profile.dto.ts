import type { CertificateProfile } from "@keyward/contract";
import type { AppDeps } from "../../context";
import { toIso } from "../../lib/dates";
import { toProfileCaDto } from "./ca.dto";
import { listCasByIds } from "./ca.repository";
import { toConfigDtos } from "./profile-config";
import { listConfigsOfProfiles, metricsOfProfiles, type ProfileRow } from "./profile.repository";
import { listCurrentRas } from "./scep/scep.repository";

/** Certificates ending within this window count as expiring. */
export const EXPIRING_WINDOW_MS = 30 * 24 * 3600 * 1000;

const emptyMetrics = (profileId: string) => ({
  profileId,
  totalCertificates: 0,
  activeCertificates: 0,
  expiredCertificates: 0,
  expiringCertificates: 0,
  revokedCertificates: 0,
});

/** Profiles with their CA, enrollment configurations and metrics, in the order given. */
export const toProfileDtos = async (
  deps: Pick<AppDeps, "db" | "env">,
  rows: ProfileRow[],
  now = new Date(),
): Promise<CertificateProfile[]> => {
  const { db } = deps;
  const ids = rows.map((r) => r.id);
  const caIds = [...new Set(rows.flatMap((r) => (r.ca_id ? [r.ca_id] : [])))];
  const scepIds = rows.filter((r) => r.enrollment_type === "scep").map((r) => r.id);
  const [cas, configs, metrics, ras] = await Promise.all([
    listCasByIds(db, caIds),
    listConfigsOfProfiles(db, ids),
    metricsOfProfiles(db, ids, now, new Date(now.getTime() + EXPIRING_WINDOW_MS)),
    listCurrentRas(db, scepIds),
  ]);
  const raById = new Map(ras.map((r) => [r.profile_id, r]));
  const caById = new Map(cas.map((ca) => [ca.id, ca]));
  const metricsById = new Map(metrics.map((m) => [m.profileId, m]));
  return rows.map((row) => {
    const ca = row.ca_id ? caById.get(row.ca_id) : undefined;
    return {
      id: row.id,
      projectId: row.project_id,
      caId: row.ca_id,
      certificatePolicyId: null,
      slug: row.slug,
      description: row.description,
      enrollmentType: row.enrollment_type,
      issuerType: row.issuer_type,
      externalConfigs: row.external_configs ?? null,
      defaults: row.defaults ?? null,
      createdAt: toIso(row.created_at),
      updatedAt: toIso(row.updated_at),
      ...(ca ? { certificateAuthority: toProfileCaDto(ca) } : {}),
      metrics: metricsById.get(row.id) ?? emptyMetrics(row.id),
      ...toConfigDtos(
        row.id,
        configs.filter((c) => c.profile_id === row.id),
        deps.env.PUBLIC_URL ?? "",
        raById.has(row.id)
          ? { certificatePem: raById.get(row.id)!.certificate_pem, notAfter: raById.get(row.id)!.not_after }
          : undefined,
      ),
    };
  });
};
