import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { chownSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import mysql from "mysql2/promise";
import { ensureDebianPackages, freePort, waitFor } from "./debian";

const MARIADBD = "/usr/sbin/mariadbd";
const INSTALL_DB = "/usr/bin/mariadb-install-db";

const openssl = (dir: string, args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "ignore" });

/** A throwaway CA and a server certificate for 127.0.0.1 and localhost, so the TLS path is real. */
const makeCertificates = (dir: string) => {
  openssl(
    dir,
    ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem"].concat([
      "-days",
      "2",
      "-subj",
      "/CN=Keyward test MariaDB CA",
    ]),
  );
  openssl(
    dir,
    ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr"].concat([
      "-subj",
      "/CN=localhost",
    ]),
  );
  writeFileSync(join(dir, "san.ext"), "subjectAltName=DNS:localhost,IP:127.0.0.1\n");
  openssl(
    dir,
    ["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial"].concat([
      "-out",
      "server.pem",
      "-days",
      "2",
      "-extfile",
      "san.ext",
    ]),
  );
  // A second, unrelated CA: a client trusting only it must refuse the server.
  openssl(
    dir,
    ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "other.key", "-out", "other.pem"].concat([
      "-days",
      "2",
      "-subj",
      "/CN=Some other CA",
    ]),
  );
};

const chownTree = (dir: string, uid: number, gid: number) => {
  chownSync(dir, uid, gid);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) chownTree(path, uid, gid);
    else chownSync(path, uid, gid);
  }
};

/**
 * Debian's MariaDB server with its own data directory on a free loopback port, TLS from a CA the
 * test made, run as the unprivileged mysql user. `keyward_root` may log in only over TLS.
 * Published as KEYWARD_TEST_MARIADB_URL (mysql://keyward_root:<password>@127.0.0.1:<port>/keyward),
 * KEYWARD_TEST_MARIADB_CA (PEM) and KEYWARD_TEST_MARIADB_OTHER_CA (a CA that did not sign it).
 */
export const startMariadb = async () => {
  ensureDebianPackages(MARIADBD, ["mariadb-server"]);
  const dir = mkdtempSync(join(tmpdir(), "keyward-mariadb-"));
  makeCertificates(dir);
  const asRoot = userInfo().uid === 0;
  if (asRoot) {
    chownTree(
      dir,
      Number(execFileSync("id", ["-u", "mysql"]).toString()),
      Number(execFileSync("id", ["-g", "mysql"]).toString()),
    );
  }
  const user = asRoot ? ["--user=mysql"] : [];
  execFileSync(
    INSTALL_DB,
    [
      "--no-defaults",
      ...user,
      `--datadir=${join(dir, "data")}`,
      "--skip-test-db",
      "--auth-root-authentication-method=socket",
    ],
    { stdio: "ignore" },
  );
  const port = await freePort();
  const socket = join(dir, "mysqld.sock");
  const child = spawn(
    MARIADBD,
    [
      "--no-defaults",
      ...user,
      `--datadir=${join(dir, "data")}`,
      `--port=${port}`,
      "--bind-address=127.0.0.1",
      `--socket=${socket}`,
      `--pid-file=${join(dir, "mysqld.pid")}`,
      "--skip-log-bin",
      "--innodb-buffer-pool-size=32M",
      "--innodb-flush-log-at-trx-commit=0",
      "--max-connections=300",
      `--ssl-ca=${join(dir, "ca.pem")}`,
      `--ssl-cert=${join(dir, "server.pem")}`,
      `--ssl-key=${join(dir, "server.key")}`,
    ],
    { stdio: "ignore" },
  );
  const exited = once(child, "exit");
  const password = randomBytes(18).toString("hex");
  // The install lets the OS user who ran it in over the socket: used once, to create the TCP root.
  const socketUser = asRoot ? "root" : userInfo().username;
  await waitFor("mariadbd", async () => {
    const probe = await mysql.createConnection({ socketPath: socket, user: socketUser });
    await probe.end();
    return true;
  });
  const connection = await mysql.createConnection({ socketPath: socket, user: socketUser });
  try {
    for (const statement of [
      `CREATE USER 'keyward_root'@'%' IDENTIFIED BY '${password}' REQUIRE SSL`,
      "GRANT ALL PRIVILEGES ON *.* TO 'keyward_root'@'%' WITH GRANT OPTION",
      "CREATE DATABASE keyward",
      "CREATE TABLE keyward.greetings (id INT PRIMARY KEY, text VARCHAR(32))",
      "INSERT INTO keyward.greetings VALUES (1, 'hello')",
    ])
      await connection.query(statement);
  } finally {
    await connection.end();
  }
  process.env.KEYWARD_TEST_MARIADB_URL = `mysql://keyward_root:${password}@127.0.0.1:${port}/keyward`;
  process.env.KEYWARD_TEST_MARIADB_CA = readFileSync(join(dir, "ca.pem"), "utf8");
  process.env.KEYWARD_TEST_MARIADB_OTHER_CA = readFileSync(join(dir, "other.pem"), "utf8");
  return async () => {
    child.kill("SIGKILL");
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
};
