import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { chownSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { ensureDebianPackages, freePort, waitFor } from "./debian";

const SERVER = "/usr/lib/rabbitmq/bin/rabbitmq-server";
const EPMD = "/usr/bin/epmd";

/**
 * Debian's RabbitMQ with the management plugin, on free loopback ports, with its own node name,
 * data directory, Erlang cookie and port mapper, run as the unprivileged rabbitmq user. Erlang
 * starts slowly (about 5 s), so this runs once per test run. Published as
 * KEYWARD_TEST_RABBITMQ_URL (http://<admin>:<password>@127.0.0.1:<management port>) and
 * KEYWARD_TEST_RABBITMQ_AMQP_PORT.
 */
export const startRabbitmq = async () => {
  ensureDebianPackages(SERVER, ["rabbitmq-server"]);
  const dir = mkdtempSync(join(tmpdir(), "keyward-rabbitmq-"));
  const [amqpPort, managementPort, distPort, epmdPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const password = randomBytes(18).toString("hex");
  writeFileSync(join(dir, "enabled_plugins"), "[rabbitmq_management].\n");
  writeFileSync(
    join(dir, "rabbitmq.conf"),
    [
      `listeners.tcp.default = 127.0.0.1:${amqpPort}`,
      `management.tcp.ip = 127.0.0.1`,
      `management.tcp.port = ${managementPort}`,
      "loopback_users = none",
      "default_user = keyward_admin",
      `default_pass = ${password}`,
      "log.console = false",
      "",
    ].join("\n"),
  );
  const asRoot = userInfo().uid === 0;
  if (asRoot) {
    const uid = Number(execFileSync("id", ["-u", "rabbitmq"]).toString());
    const gid = Number(execFileSync("id", ["-g", "rabbitmq"]).toString());
    for (const path of [dir, join(dir, "enabled_plugins"), join(dir, "rabbitmq.conf")]) chownSync(path, uid, gid);
  }
  const env = {
    PATH: "/usr/bin:/bin",
    HOME: dir,
    LANG: "C.UTF-8",
    RABBITMQ_NODENAME: `keyward-${randomBytes(4).toString("hex")}@localhost`,
    RABBITMQ_BASE: dir,
    RABBITMQ_MNESIA_BASE: join(dir, "mnesia"),
    RABBITMQ_LOG_BASE: join(dir, "log"),
    RABBITMQ_CONFIG_FILE: join(dir, "rabbitmq.conf"),
    RABBITMQ_ENABLED_PLUGINS_FILE: join(dir, "enabled_plugins"),
    RABBITMQ_PLUGINS_EXPAND_DIR: join(dir, "plugins-expand"),
    RABBITMQ_PID_FILE: join(dir, "rabbitmq.pid"),
    RABBITMQ_DIST_PORT: String(distPort),
    ERL_EPMD_PORT: String(epmdPort),
  };
  const run = (binary: string, args: string[]) => {
    const [command, argv] = asRoot ? ["/usr/sbin/runuser", ["-u", "rabbitmq", "--", binary, ...args]] : [binary, args];
    // Its own process group, so stopping takes down wrappers and the Erlang VM together.
    const started = spawn(command, argv, { cwd: dir, env, stdio: "ignore", detached: true });
    return { started, exited: once(started, "exit") };
  };
  // Our own port mapper in the foreground: the one Erlang would start daemonizes and outlives the test.
  const epmd = run(EPMD, ["-port", String(epmdPort), "-address", "127.0.0.1"]);
  const { started: child, exited } = run(SERVER, []);
  const url = `http://127.0.0.1:${managementPort}`;
  const authorization = `Basic ${Buffer.from(`keyward_admin:${password}`).toString("base64")}`;
  await waitFor(
    "rabbitmq-server",
    async () => {
      if (child.exitCode !== null) throw new Error("rabbitmq-server exited");
      return (await fetch(`${url}/api/overview`, { headers: { authorization } })).ok;
    },
    60_000,
  );
  process.env.KEYWARD_TEST_RABBITMQ_URL = `http://keyward_admin:${password}@127.0.0.1:${managementPort}`;
  process.env.KEYWARD_TEST_RABBITMQ_AMQP_PORT = String(amqpPort);
  return async () => {
    // A test broker holds nothing worth a graceful shutdown.
    for (const { started, exited: gone } of [{ started: child, exited }, epmd]) {
      if (started.pid !== undefined) process.kill(-started.pid, "SIGKILL");
      await gone;
    }
    rmSync(dir, { recursive: true, force: true });
  };
};
