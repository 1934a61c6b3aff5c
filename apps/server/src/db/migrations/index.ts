import type { Migration, MigrationProvider } from "kysely";
import * as m0001 from "./0001-foundation";
import * as m0002 from "./0002-privileges";
import * as m0003 from "./0003-auth-methods";
import * as m0004 from "./0004-project-structure";
import * as m0005 from "./0005-dynamic-secrets";
import * as m0006 from "./0006-pki";
import * as m0007 from "./0007-gateways";
import * as m0008 from "./0008-group-names";
import * as m0010 from "./0010-secrets";
import * as m0012 from "./0012-pki-enrollment";
import * as m0017 from "./0017-workload-logins";
import * as m0018 from "./0018-kms";
import * as m0019 from "./0019-audit-log";
import * as m0021 from "./0021-runtime";
import * as m0022 from "./0022-secret-fields";
import * as m0023 from "./0023-people";
import * as m0024 from "./0024-scim";
import * as m0025 from "./0025-secret-events";
import * as m0026 from "./0026-app-connections";
import * as m0027 from "./0027-secret-rotations";
import * as m0028 from "./0028-secret-approvals";
import * as m0029 from "./0029-access-approvals";
import * as m0030 from "./0030-secret-search";
import * as m0031 from "./0031-lease-pacing";
import * as m0032 from "./0032-audit-keyset";
import * as m0033 from "./0033-pki-scep";
import * as m0034 from "./0034-token-state-notices";
import * as m0035 from "./0035-people-per-organization";
import * as m0036 from "./0036-session-families";
import * as m0037 from "./0037-rotation-statements";
import * as m0038 from "./0038-approval-principals";
import * as m0039 from "./0039-secret-syncs";
import * as m0040 from "./0040-folder-commits";
import * as m0041 from "./0041-ssh";
import * as m0042 from "./0042-root-keys";
import * as m0043 from "./0043-ssh-host-groups";
import * as m0044 from "./0044-folder-versions";
import * as m0045 from "./0045-orphan-sweep-claims";

/**
 * Static registry: one line per migration, in order. Each issue's tables get their own file so
 * modules never edit each other's migrations.
 */
const migrations: Record<string, Migration> = {
  "0001-foundation": m0001,
  "0002-privileges": m0002,
  "0003-auth-methods": m0003,
  "0004-project-structure": m0004,
  "0005-dynamic-secrets": m0005,
  "0006-pki": m0006,
  "0007-gateways": m0007,
  "0008-group-names": m0008,
  "0010-secrets": m0010,
  "0012-pki-enrollment": m0012,
  "0017-workload-logins": m0017,
  "0018-kms": m0018,
  "0019-audit-log": m0019,
  "0021-runtime": m0021,
  "0022-secret-fields": m0022,
  "0023-people": m0023,
  "0024-scim": m0024,
  "0025-secret-events": m0025,
  "0026-app-connections": m0026,
  "0027-secret-rotations": m0027,
  "0028-secret-approvals": m0028,
  "0029-access-approvals": m0029,
  "0030-secret-search": m0030,
  "0031-lease-pacing": m0031,
  "0032-audit-keyset": m0032,
  "0033-pki-scep": m0033,
  "0034-token-state-notices": m0034,
  "0035-people-per-organization": m0035,
  "0036-session-families": m0036,
  "0037-rotation-statements": m0037,
  "0038-approval-principals": m0038,
  "0039-secret-syncs": m0039,
  "0040-folder-commits": m0040,
  "0041-ssh": m0041,
  "0042-root-keys": m0042,
  "0043-ssh-host-groups": m0043,
  "0044-folder-versions": m0044,
  "0045-orphan-sweep-claims": m0045,
};

export const migrationProvider: MigrationProvider = { getMigrations: async () => migrations };
