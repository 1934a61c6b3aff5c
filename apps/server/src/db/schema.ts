import type { AuthMethodTables } from "./tables/auth-methods";
import type { FoundationTables } from "./tables/foundation";
import type { ProjectStructureTables } from "./tables/project-structure";
import type { GatewayTables } from "./tables/gateways";
import type { DynamicSecretTables } from "./tables/dynamic-secrets";
import type { PkiTables } from "./tables/pki";
import type { PkiScepTables } from "./tables/pki-scep";
import type { PrivilegeTables } from "./tables/privileges";
import type { SecretTables } from "./tables/secrets";
import type { KmsTables } from "./tables/kms";
import type { AuditTables } from "./tables/audit";
import type { RuntimeTables } from "./tables/runtime";
import type { PeopleTables } from "./tables/people";
import type { EventTables } from "./tables/events";
import type { RotationTables } from "./tables/rotation";
import type { SecretSyncTables } from "./tables/secret-syncs";
import type { ApprovalTables } from "./tables/approvals";
import type { AccessApprovalTables } from "./tables/access-approvals";
import type { SshTables } from "./tables/ssh";
import type { RootKeyTables } from "./tables/root-keys";

/**
 * All tables. Each module declares its tables in db/tables/<module>.ts and adds them here,
 * next to its migration in db/migrations.
 */
export interface DB
  extends
    FoundationTables,
    ProjectStructureTables,
    AuthMethodTables,
    GatewayTables,
    DynamicSecretTables,
    PkiTables,
    PkiScepTables,
    PrivilegeTables,
    SecretTables,
    KmsTables,
    AuditTables,
    RuntimeTables,
    PeopleTables,
    EventTables,
    RotationTables,
    SecretSyncTables,
    ApprovalTables,
    AccessApprovalTables,
    SshTables,
    RootKeyTables {}
