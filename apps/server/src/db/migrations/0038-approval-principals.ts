import type { Kysely } from "kysely";
import { ID, runStatements } from "./run-sql";

/**
 * One table of approvers and bypassers for both kinds of approval policy. A row belongs to a change
 * policy (`secret_policy_id`) or an access policy (`access_policy_id`) and names a person, an identity
 * or a group through a foreign key, so a principal that is deleted stops being an approver anywhere;
 * `position` keeps the order they were given in, per policy and role.
 *
 * The access policies' rows move over as they are (ids, order, creation times). The change policies'
 * rows had no foreign keys: each one that still names an existing principal moves over, numbered in
 * the order it was stored; a row naming a person, identity or group deleted since named nobody and is
 * not carried over.
 */
export const up = (db: Kysely<unknown>) =>
  runStatements(db, [
    `create table approval_policy_principals (${ID},
      secret_policy_id uuid references secret_approval_policies(id) on delete cascade,
      access_policy_id uuid references access_approval_policies(id) on delete cascade,
      role text not null check (role in ('approver', 'bypasser')),
      principal_type text not null check (principal_type in ('user', 'identity', 'group')),
      user_id uuid references users(id) on delete cascade,
      identity_id uuid references identities(id) on delete cascade,
      group_id uuid references groups(id) on delete cascade,
      position int not null default 0,
      created_at timestamptz not null default now(),
      check (num_nonnulls(secret_policy_id, access_policy_id) = 1),
      check (num_nonnulls(user_id, identity_id, group_id) = 1),
      check ((principal_type = 'user') = (user_id is not null)),
      check ((principal_type = 'identity') = (identity_id is not null)))`,
    `create unique index approval_policy_principals_unique_idx on approval_policy_principals
      (coalesce(secret_policy_id, access_policy_id), role, coalesce(user_id, identity_id, group_id))`,
    `create index approval_policy_principals_secret_idx on approval_policy_principals (secret_policy_id)
      where secret_policy_id is not null`,
    `create index approval_policy_principals_access_idx on approval_policy_principals (access_policy_id)
      where access_policy_id is not null`,
    `insert into approval_policy_principals
      (id, access_policy_id, role, principal_type, user_id, identity_id, group_id, position, created_at)
      select id, policy_id, role, principal_type, user_id, identity_id, group_id, position, created_at
      from access_approval_policy_principals
      order by policy_id, role, position, id
      on conflict do nothing`,
    `insert into approval_policy_principals
      (secret_policy_id, role, principal_type, user_id, identity_id, group_id, position)
      select sp.policy_id, sp.role, sp.principal_type,
        case when sp.principal_type = 'user' then sp.principal_id end,
        case when sp.principal_type = 'identity' then sp.principal_id end,
        case when sp.principal_type = 'group' then sp.principal_id end,
        (row_number() over (partition by sp.policy_id, sp.role order by sp.ctid) - 1)::int
      from secret_approval_policy_principals sp
      where (sp.principal_type = 'user' and exists (select 1 from users u where u.id = sp.principal_id))
        or (sp.principal_type = 'identity' and exists (select 1 from identities i where i.id = sp.principal_id))
        or (sp.principal_type = 'group' and exists (select 1 from groups g where g.id = sp.principal_id))`,
    `drop table secret_approval_policy_principals`,
    `drop table access_approval_policy_principals`,
  ]);

/** The two tables again, each kind's rows moved back. */
export const down = (db: Kysely<unknown>) =>
  runStatements(db, [
    `create table secret_approval_policy_principals (
      policy_id uuid not null references secret_approval_policies(id) on delete cascade,
      role text not null,
      principal_type text not null,
      principal_id uuid not null,
      primary key (policy_id, role, principal_type, principal_id))`,
    `create table access_approval_policy_principals (${ID},
      policy_id uuid not null references access_approval_policies(id) on delete cascade,
      role text not null check (role in ('approver', 'bypasser')),
      principal_type text not null check (principal_type in ('user', 'identity', 'group')),
      user_id uuid references users(id) on delete cascade,
      identity_id uuid references identities(id) on delete cascade,
      group_id uuid references groups(id) on delete cascade,
      position int not null default 0,
      created_at timestamptz not null default now(),
      check (num_nonnulls(user_id, identity_id, group_id) = 1))`,
    `create index access_approval_policy_principals_policy_idx on access_approval_policy_principals (policy_id)`,
    `insert into secret_approval_policy_principals (policy_id, role, principal_type, principal_id)
      select secret_policy_id, role, principal_type, coalesce(user_id, identity_id, group_id)
      from approval_policy_principals where secret_policy_id is not null
      order by secret_policy_id, role, position`,
    `insert into access_approval_policy_principals
      (id, policy_id, role, principal_type, user_id, identity_id, group_id, position, created_at)
      select id, access_policy_id, role, principal_type, user_id, identity_id, group_id, position, created_at
      from approval_policy_principals where access_policy_id is not null`,
    `drop table approval_policy_principals`,
  ]);
