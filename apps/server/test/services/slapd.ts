import { execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { chownSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { Client } from "ldapts";
import { ensureDebianPackages, freePort, waitFor } from "./debian";

const SLAPD = "/usr/sbin/slapd";
const SLAPADD = "/usr/sbin/slapadd";
const SUFFIX = "dc=keyward,dc=test";
const BIND_DN = `cn=reader,${SUFFIX}`;
const BIND_PASSWORD = "reader-password";
const ADMIN_DN = `cn=admin,${SUFFIX}`;
const ADMIN_PASSWORD = "admin-password";

/** The test directory: a service account and people whose passwords the LDAP suites know. */
export const LDAP_TEST_USERS = {
  alice: { password: "alice-password", department: "engineering", employeeType: "staff" },
  bob: { password: "bob-password", department: "sales", employeeType: "contractor" },
  carol: { password: "carol-password", department: "engineering", employeeType: "staff" },
  dave: { password: "dave-password", department: "engineering", employeeType: "staff" },
  erin: { password: "erin-password", department: "operations", employeeType: "staff" },
} as const;

const person = (uid: string, user: { password: string; department: string; employeeType: string }) => `
dn: uid=${uid},ou=people,${SUFFIX}
objectClass: inetOrgPerson
uid: ${uid}
cn: ${uid}
sn: ${uid}
mail: ${uid}@keyward.test
departmentNumber: ${user.department}
employeeType: ${user.employeeType}
userPassword: ${user.password}
`;

const ldif = () =>
  [
    `dn: ${SUFFIX}
objectClass: dcObject
objectClass: organization
dc: keyward
o: Keyward Test
`,
    `dn: ${BIND_DN}
objectClass: organizationalRole
objectClass: simpleSecurityObject
cn: reader
userPassword: ${BIND_PASSWORD}
`,
    `dn: ou=people,${SUFFIX}
objectClass: organizationalUnit
ou: people
`,
    `dn: ou=leases,${SUFFIX}
objectClass: organizationalUnit
ou: leases
`,
    `dn: uid=rotating,ou=leases,${SUFFIX}
objectClass: inetOrgPerson
uid: rotating
cn: rotating
sn: rotating
userPassword: rotating-initial-password
`,
    ...Object.entries(LDAP_TEST_USERS).map(([uid, user]) => person(uid, user)),
  ].join("\n");

const config = (dir: string) => `include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
pidfile ${dir}/slapd.pid
argsfile ${dir}/slapd.args
modulepath /usr/lib/ldap
moduleload back_mdb
database mdb
maxsize 67108864
suffix "${SUFFIX}"
rootdn "${ADMIN_DN}"
rootpw ${ADMIN_PASSWORD}
directory ${dir}/data
access to attrs=userPassword by self write by anonymous auth by * none
access to * by * read
`;

/**
 * Debian's OpenLDAP server on a free loopback port with a throwaway mdb directory, run as the
 * unprivileged openldap user. Published as KEYWARD_TEST_LDAP_URL, _BIND_DN, _BIND_PASSWORD, _BASE_DN, and
 * the directory manager (who may write, for dynamic-secret entries) as _ADMIN_DN, _ADMIN_PASSWORD.
 */
export const startSlapd = async () => {
  ensureDebianPackages(SLAPD, ["slapd", "ldap-utils"]);
  const dir = mkdtempSync(join(tmpdir(), "keyward-slapd-"));
  mkdirSync(join(dir, "data"));
  writeFileSync(join(dir, "slapd.conf"), config(dir));
  writeFileSync(join(dir, "directory.ldif"), ldif());
  const asRoot = userInfo().uid === 0;
  const dropPrivileges = asRoot ? ["-u", "openldap", "-g", "openldap"] : [];
  // As root, the data files must belong to the user slapd drops to.
  const owner = asRoot
    ? {
        uid: Number(execFileSync("id", ["-u", "openldap"]).toString()),
        gid: Number(execFileSync("id", ["-g", "openldap"]).toString()),
      }
    : undefined;
  execFileSync(SLAPADD, ["-f", join(dir, "slapd.conf"), "-l", join(dir, "directory.ldif")], { stdio: "ignore" });
  if (owner) {
    for (const path of [dir, join(dir, "data"), ...readdirSync(join(dir, "data")).map((f) => join(dir, "data", f))]) {
      chownSync(path, owner.uid, owner.gid);
    }
  }
  const port = await freePort();
  const url = `ldap://127.0.0.1:${port}`;
  const child = spawn(SLAPD, ["-d", "0", "-f", join(dir, "slapd.conf"), "-h", `${url}/`, ...dropPrivileges], {
    stdio: "ignore",
  });
  const exited = once(child, "exit");
  await waitFor("slapd", async () => {
    const client = new Client({ url, connectTimeout: 1_000 });
    try {
      await client.bind(BIND_DN, BIND_PASSWORD);
      return true;
    } finally {
      await client.unbind().catch(() => undefined);
    }
  });
  process.env.KEYWARD_TEST_LDAP_URL = url;
  process.env.KEYWARD_TEST_LDAP_BIND_DN = BIND_DN;
  process.env.KEYWARD_TEST_LDAP_BIND_PASSWORD = BIND_PASSWORD;
  process.env.KEYWARD_TEST_LDAP_BASE_DN = `ou=people,${SUFFIX}`;
  process.env.KEYWARD_TEST_LDAP_ADMIN_DN = ADMIN_DN;
  process.env.KEYWARD_TEST_LDAP_ADMIN_PASSWORD = ADMIN_PASSWORD;
  return async () => {
    child.kill("SIGTERM");
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
};
