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

/**
 * What the worker has collected and scanned so far. Each file's scan reads only the events written since
 * the last one (with a margin for buffered writes) and looks in them for every value, and in the earlier
 * events only for the values collected since: each pair is looked at once, so the scan stays linear as a
 * worker's shared database grows over its files.
 */
type ScanState = {
  values: Map<string, string>;
  installed: boolean;
  scanned: Map<string, string>;
  valuesScanned: number;
  newestEvent: Date | undefined;
};
const GLOBAL_KEY = Symbol.for("keyward.test.secretScan");
const state: ScanState = ((globalThis as Record<symbol, ScanState>)[GLOBAL_KEY] ??= {
  values: new Map(),
  installed: false,
  scanned: new Map(),
  valuesScanned: 0,
  newestEvent: undefined,
});
/** Events are buffered before they are written; one written late may carry an earlier time. */
const LATE_WRITE_MARGIN_MS = 120_000;

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
  const since = state.newestEvent && new Date(state.newestEvent.getTime() - LATE_WRITE_MARGIN_MS);
  const rows = await app.deps.db
    .selectFrom("audit_logs")
    .select(["id", "created_at", "actor_metadata", "event_metadata", "project_name", "user_agent"])
    .$if(since !== undefined, (qb) => qb.where("created_at", ">=", since!))
    .execute();
  const values = [...state.values];
  const newValues = values.slice(state.valuesScanned);
  const leaks: string[] = [];
  const look = (id: string, text: string, among: [string, string][]) => {
    for (const [value, key] of among) if (text.includes(value)) leaks.push(`${id}: the value of ${key}`);
  };
  for (const [id, text] of state.scanned) look(id, text, newValues);
  for (const { created_at, ...row } of rows) {
    if (state.scanned.has(row.id)) continue;
    const text = JSON.stringify(row);
    for (const [what, shape] of SHAPES) if (shape.test(text)) leaks.push(`${row.id}: ${what}`);
    look(row.id, text, values);
    state.scanned.set(row.id, text);
    if (!state.newestEvent || created_at > state.newestEvent) state.newestEvent = created_at;
  }
  state.valuesScanned = values.length;
  expect(leaks, "audit events must carry no secret").toEqual([]);
});
