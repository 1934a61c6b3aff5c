import { createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBoundedCache } from "../../src/lib/bounded-cache";
import type { OutboundPolicy } from "../../src/lib/outbound";
import { BadRequestError } from "../../src/errors";
import type { ProviderDocument } from "../../src/modules/connectors/connectors.state";
import { generatePassword } from "../../src/modules/connectors/credentials";
import { getJson, withHttp } from "../../src/modules/connectors/http";
import { withLdap } from "../../src/modules/connectors/ldap";
import { withMysql } from "../../src/modules/connectors/mysql";
import { providerKeys, type ProviderDocumentDeps } from "../../src/modules/connectors/oidc-discovery";
import { withPostgres, type PostgresTarget } from "../../src/modules/connectors/postgres";
import { withRabbitMq } from "../../src/modules/connectors/rabbitmq";
import { withRedis } from "../../src/modules/connectors/redis";
import { ConnectorTimeoutError, type Reach } from "../../src/modules/connectors/rules";
import { targetUrl } from "../dynamic-secrets/helpers";
import { mariadbCa, mariadbUrl, otherCa } from "../dynamic-secrets/provider-targets";
import { createTestCa, startKeyServer, type Peer, type TestCa } from "../services/workload-peers";

/**
 * The rules every connector keeps (src/modules/connectors/rules.ts), against real servers: a silent
 * peer is given up on within the deadline, a CA is what the certificate is checked against, the
 * outbound guard refuses what the policy does not allow, and no password leaves in an error.
 */

const loopback: Reach = { outbound: "loopback" };

/** A TCP server that accepts connections and never says a word; remembers which sockets were closed. */
const startSilentServer = async () => {
  const sockets: Socket[] = [];
  const closed: Socket[] = [];
  const server: Server = createServer((socket) => {
    sockets.push(socket);
    // Reads (and drops) what the client sends, so a client's goodbye is seen.
    socket.resume();
    socket.on("error", () => undefined);
    socket.on("close", () => closed.push(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    sockets,
    closed,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
};

const postgresTarget = (overrides: Partial<PostgresTarget> = {}): PostgresTarget => {
  const url = targetUrl();
  return {
    host: url.hostname,
    port: Number(url.port),
    database: "postgres",
    username: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    tls: undefined,
    ...overrides,
  };
};

const mysqlTarget = (tls: { ca?: string; rejectUnauthorized: boolean } | undefined) => {
  const url = mariadbUrl();
  return {
    host: url.hostname,
    port: Number(url.port),
    database: url.pathname.slice(1),
    username: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    tls,
  };
};

/** How a call ended: its error (or undefined) and how long it took. */
const outcome = async (call: () => Promise<unknown>) => {
  const started = Date.now();
  try {
    await call();
    return { error: undefined, ms: Date.now() - started };
  } catch (error) {
    return { error: error as Error, ms: Date.now() - started };
  }
};

describe("deadlines", () => {
  let silent: Awaited<ReturnType<typeof startSilentServer>>;
  beforeAll(async () => {
    silent = await startSilentServer();
  });
  afterAll(() => silent.close());

  const DEADLINE = 1_500;
  const reach: Reach = { ...loopback, deadlineMs: DEADLINE };
  const host = "127.0.0.1";
  const calls: Record<string, () => Promise<unknown>> = {
    postgres: () => withPostgres(reach, postgresTarget({ host, port: silent.port }), (c) => c.query("select 1")),
    mysql: () => withMysql(reach, { ...mysqlTarget(undefined), host, port: silent.port }, (c) => c.query("select 1")),
    redis: () => withRedis(reach, { host, port: silent.port, password: "pw-redis", tls: undefined }, (c) => c.ping()),
    ldap: () =>
      withLdap(
        reach,
        { url: `ldap://${host}:${silent.port}`, bind: { dn: "cn=x", password: "pw-ldap" } },
        async () => undefined,
      ),
    http: () => getJson(reach, { url: `http://${host}:${silent.port}/doc` }),
    rabbitmq: () =>
      withRabbitMq(reach, { url: `http://${host}:${silent.port}/`, username: "u", password: "pw-rabbit" }, (api) =>
        api("GET", "overview"),
      ),
  };

  for (const [kind, call] of Object.entries(calls)) {
    it(`${kind}: a silent server is a clear error within the deadline, and the connection is closed`, async () => {
      const before = silent.sockets.length;
      const { error, ms } = await outcome(call);
      expect(error).toBeInstanceOf(ConnectorTimeoutError);
      expect(error!.message).toMatch(new RegExp(`did not answer within ${DEADLINE} ms`));
      expect(error!.message).toContain(`${silent.port}`);
      expect(ms).toBeGreaterThanOrEqual(DEADLINE - 50);
      expect(ms).toBeLessThan(DEADLINE + 1_000);
      expect(silent.sockets.length).toBeGreaterThan(before);
      // The client is torn down, not left waiting on the peer.
      const opened = silent.sockets.slice(before);
      for (let i = 0; i < 50 && !opened.every((s) => silent.closed.includes(s)); i += 1)
        await new Promise((resolve) => setTimeout(resolve, 20));
      expect(opened.every((s) => silent.closed.includes(s))).toBe(true);
    });
  }
});

describe("TLS", () => {
  let ca: TestCa;
  let stranger: TestCa;
  let keys: Peer;
  beforeAll(async () => {
    [ca, stranger] = await Promise.all([createTestCa(), createTestCa()]);
    keys = await startKeyServer(ca, () => ({ keys: [] }));
  });
  afterAll(() => keys.close());

  it("http: the given CA is what the certificate is checked against, by address and by name", async () => {
    expect(await getJson(loopback, { url: keys.url, ca: ca.caPem })).toEqual({ keys: [] });
    const byName = keys.url.replace("127.0.0.1", "localhost");
    expect(await getJson(loopback, { url: byName, ca: ca.caPem })).toEqual({ keys: [] });
    const { error: otherCa } = await outcome(() => getJson(loopback, { url: keys.url, ca: stranger.caPem }));
    expect(otherCa?.message).toMatch(/certificate/i);
    const { error: noCa } = await outcome(() => getJson(loopback, { url: keys.url }));
    expect(noCa?.message).toMatch(/certificate/i);
  });

  it("mysql: the server's CA verifies, another CA is refused, unless the owner turned checking off", async () => {
    const select = (c: { query: (sql: string) => Promise<unknown> }) => c.query("select 1");
    await withMysql(loopback, mysqlTarget({ ca: mariadbCa(), rejectUnauthorized: true }), select);
    const { error } = await outcome(() =>
      withMysql(loopback, mysqlTarget({ ca: otherCa(), rejectUnauthorized: true }), select),
    );
    expect(error?.message).toMatch(/certificate|self.signed|verify/i);
    await withMysql(loopback, mysqlTarget({ ca: otherCa(), rejectUnauthorized: false }), select);
  });
});

describe("the outbound guard", () => {
  const at = (outbound: OutboundPolicy): Reach => ({ outbound, deadlineMs: 1_000 });

  it("refuses loopback unless allowed, for host and URL targets alike", async () => {
    const pgLoopback = await outcome(() => withPostgres(at("none"), postgresTarget(), (c) => c.query("select 1")));
    expect(pgLoopback.error).toBeInstanceOf(BadRequestError);
    expect(pgLoopback.error?.message).toBe("Invalid db host");
    await withPostgres(at("loopback"), postgresTarget(), (c) => c.query("select 1"));

    const ldapLoopback = await outcome(() =>
      withLdap(at("none"), { url: "ldap://127.0.0.1:1" }, async () => undefined),
    );
    expect(ldapLoopback.error).toBeInstanceOf(BadRequestError);
    expect(ldapLoopback.error?.message).toBe("Local IPs not allowed as URL");
  });

  it("refuses a private address unless the policy is private, and never a metadata address", async () => {
    const privateHost = { host: "10.255.255.1", port: 6379, password: "x", tls: undefined };
    for (const outbound of ["none", "loopback"] as const) {
      const { error } = await outcome(() => withRedis(at(outbound), privateHost, (c) => c.ping()));
      expect(error).toBeInstanceOf(BadRequestError);
    }
    // Allowed: the guard lets it through, and what fails is the connection itself (nothing listens there).
    const allowed = await outcome(() => withRedis(at("private"), privateHost, (c) => c.ping()));
    expect(allowed.error).toBeDefined();
    expect(allowed.error).not.toBeInstanceOf(BadRequestError);

    const metadata = await outcome(() => getJson(at("private"), { url: "http://169.254.169.254/latest/meta-data" }));
    expect(metadata.error).toBeInstanceOf(BadRequestError);
  });
});

describe("credentials in errors", () => {
  it("a connection's password and a password being set never appear in the error", async () => {
    const target = postgresTarget();
    const { error } = await outcome(() =>
      // The leading "x" makes the cast fail as invalid syntax whatever the password is (digits alone would be a
      // number, or one out of range).
      withPostgres(loopback, target, (c) => c.query(`select 'x${target.password}'::int`)),
    );
    expect(error?.message).toMatch(/invalid input syntax/);
    expect(error?.message).toContain("[redacted]");
    expect(`${error?.message}\n${error?.stack}`).not.toContain(target.password);

    const generated = generatePassword();
    const withNew = await outcome(() =>
      withPostgres({ ...loopback, secrets: [generated] }, target, (c) => c.query(`select '${generated}!'::int`)),
    );
    expect(withNew.error?.message).toContain("[redacted]");
    expect(`${withNew.error?.message}\n${withNew.error?.stack}`).not.toContain(generated);
  });

  it("holds for a wrong login and for the error a caller's own work throws", async () => {
    const password = generatePassword();
    const wrong = await outcome(() =>
      withMysql(loopback, { ...mysqlTarget({ ca: mariadbCa(), rejectUnauthorized: true }), password }, (c) =>
        c.query("select 1"),
      ),
    );
    expect(wrong.error).toBeDefined();
    expect(`${wrong.error?.message}\n${wrong.error?.stack}`).not.toContain(password);

    const http = await outcome(() =>
      withHttp({ ...loopback, secrets: [password] }, { url: "http://127.0.0.1:1/" }, async () => {
        throw new Error(`the peer said ${password}`);
      }),
    );
    expect(http.error?.message).toBe("the peer said [redacted]");
  });
});

describe("provider documents (OIDC discovery, JWKS)", () => {
  let ca: TestCa;
  let server: Peer;
  let document: { keys: { kid: string }[] } = { keys: [{ kid: "one" }] };
  beforeAll(async () => {
    ca = await createTestCa();
    server = await startKeyServer(ca, () => document);
  });
  afterAll(() => server.close());

  it("caches per URL and trust, refetches for an unknown kid at most every 30 s, and expires", async () => {
    let now = 1_000_000;
    const deps = {
      providerDocuments: createBoundedCache<ProviderDocument>({ maxEntries: 10 }),
      clock: { now: () => now },
      env: { ALLOW_PRIVATE_OUTBOUND: "loopback" as const },
      outboundCa: undefined,
    } as unknown as ProviderDocumentDeps;
    const url = `${server.url}/jwks`;
    const start = server.requests();
    const keysFor = (kid?: string) => providerKeys(deps, url, { caCert: ca.caPem, kid });

    expect((await keysFor("one")).keys).toEqual([{ kid: "one" }]);
    await keysFor("one");
    expect(server.requests() - start).toBe(1);

    document = { keys: [{ kid: "one" }, { kid: "two" }] };
    expect((await keysFor("two")).keys).toHaveLength(2);
    expect(server.requests() - start).toBe(2);

    // That was the refetch for an unknown key: another unknown key waits 30 s for the next one.
    await keysFor("three");
    await keysFor("three");
    expect(server.requests() - start).toBe(2);
    now += 31_000;
    await keysFor("three");
    expect(server.requests() - start).toBe(3);

    // Known keys are served from the cache until it expires (ten minutes).
    now += 9 * 60_000;
    await keysFor("one");
    expect(server.requests() - start).toBe(3);
    now += 2 * 60_000;
    await keysFor("one");
    expect(server.requests() - start).toBe(4);
  });
});
