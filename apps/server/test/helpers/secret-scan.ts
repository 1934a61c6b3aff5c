import { afterAll, expect } from "vitest";
import { startedTestApp } from "./app";

/**
 * No secret in any audit event: every value the tests sent or received under a secret-bearing
 * key (through any fetch of the test process) is looked for in every stored event of the worker's
 * shared app once a file's tests have run, as are private keys and JWTs by their shape.
 */
const SECRET_KEY =
  /password|passphrase|privatekey|clientsecret|accesstoken|refreshtoken|^token$|^jwt$|plaintext|secretvalue|bindpass|eabsecret|hmackey|^secret$/i;
const SECRET_TREE = /^credentials$/i;
/** A rotation's `secretsMapping` names secrets (`{password: "DB_PASSWORD"}`): names, never values. */
const NAME_TREE = /^secretsMapping$/;
/** Names of secrets, not secrets: `clientSecretId`, `accessTokenPrefix`, `tokenType`… */
const NAMING_KEY = /(Id|Ids|Prefix|Type|TTL|Method|Name)$/;
/**
 * Where a credentials object is sent or whom it names, not what it proves: an audit-log stream's
 * `url`, a header's `key`, an app connection's host, port, database, user name and DN.
 */
const ADDRESS_KEY = /^(url|key|provider|host|port|database|username|dn)$/i;
const SHAPES: [string, RegExp][] = [
  ["a PEM private key", /-----BEGIN [A-Z ]*PRIVATE KEY-----/],
  ["a JWT", /eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+/],
];
const MIN_LENGTH = 8;

type ScanState = { values: Map<string, string>; installed: boolean };
const GLOBAL_KEY = Symbol.for("keyward.test.secretScan");
const state: ScanState = ((globalThis as Record<symbol, ScanState>)[GLOBAL_KEY] ??= {
  values: new Map(),
  installed: false,
});

/** Values by the key that carried them (the key, never the value, names a leak). */
const collect = (node: unknown, all = false, path = "") => {
  if (typeof node === "string") {
    if (all && node.length >= MIN_LENGTH) state.values.set(node, path);
    return;
  }
  if (!node || typeof node !== "object") return;
  for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
    if (typeof value === "string") {
      const secret = all ? !ADDRESS_KEY.test(key) : SECRET_KEY.test(key) && !NAMING_KEY.test(key);
      if (secret && value.length >= MIN_LENGTH) state.values.set(value, `${path}.${key}`);
    } else if (!NAME_TREE.test(key)) collect(value, all || SECRET_TREE.test(key), `${path}.${key}`);
  }
};

const collectText = (text: string) => {
  try {
    const parsed = JSON.parse(text) as unknown;
    // The OpenAPI document describes shapes (`required: ["password"]`); it carries no value.
    if (parsed && typeof parsed === "object" && "openapi" in parsed) return;
    collect(parsed);
  } catch {
    // Not JSON: nothing named to collect.
  }
};

if (!state.installed) {
  state.installed = true;
  const original = globalThis.fetch;
  globalThis.fetch = async (input, init) => {
    if (typeof init?.body === "string") collectText(init.body);
    const response = await original(input, init);
    if (response.headers.get("content-type")?.includes("json")) {
      void response
        .clone()
        .text()
        .then(collectText, () => undefined);
    }
    return response;
  };
}

afterAll(async () => {
  const app = await startedTestApp();
  if (!app) return;
  // Let the last responses' bodies be read and buffered read events be written.
  await new Promise((resolve) => setTimeout(resolve, 20));
  const rows = await app.deps.db
    .selectFrom("audit_logs")
    .select(["id", "actor_metadata", "event_metadata", "project_name", "user_agent"])
    .execute();
  const leaks: string[] = [];
  for (const row of rows) {
    const text = JSON.stringify(row);
    for (const [what, shape] of SHAPES) if (shape.test(text)) leaks.push(`${row.id}: ${what}`);
    for (const [value, key] of state.values) if (text.includes(value)) leaks.push(`${row.id}: the value of ${key}`);
  }
  expect(leaks, "audit events must carry no secret").toEqual([]);
});
