import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, type ServerResponse } from "node:http";
import { openPartsWithDataKey, sealPartsWithDataKey } from "../../src/crypto/data-keys";
import { openDatabase } from "../../src/db/database";
import { strongEtag } from "../../src/http/json-response";
import { secretAad } from "../../src/modules/secrets/secret-crypto";
import { listSecretsOfFolders } from "../../src/modules/secrets/secret-list.repository";
import { listenForBench } from "./announce";

/**
 * The floor of a secret list: the least a server must do per request to send a given list
 * response. The body Keyward sent (a JSON file named by FLOOR_BODY) is held in memory, and each
 * request builds it anew, serialises it, tags it (the strong ETag v4 reads carry) and sends it
 * over node:http. No database, no framework, no authentication, no permission check.
 *
 * - `/sealed`: each secret's value and comment are held sealed as Keyward seals them (one
 *   AES-256-GCM ciphertext per secret, bound to its row) and opened on every request: the floor of
 *   any list that keeps values encrypted at rest, per row, and caches no plaintext.
 * - `/plain`: the same without opening anything (values held in clear): what the list would cost
 *   if decryption were free.
 * - `/sealed-read` (with FLOOR_DATABASE_URL and FLOOR_FOLDERS, `{"folder":id,"imports":[id…]}`): as
 *   `/sealed`, after reading the rows of the folder and of its imports from the database with the
 *   list's own statement (one, as the list reads them): the floor of a list that reads its rows on
 *   every request. The rows only have to arrive (their count is checked); the body is the held one.
 */
type Secret = Record<string, unknown> & { id: string; secretValue: string; secretComment: string };
type ListBody = { secrets: Secret[]; imports: (Record<string, unknown> & { secrets: Secret[] })[] };

const template = JSON.parse(readFileSync(process.env.FLOOR_BODY!, "utf8")) as ListBody;
const key = randomBytes(32);

type Sealed = { secret: Secret; aad: string; stored: string };

const sealed = (secret: Secret): Sealed => {
  const aad = secretAad("secrets", secret.id, "fields");
  return { secret, aad, stored: sealPartsWithDataKey(key, [secret.secretValue, secret.secretComment], aad) };
};
const folder = template.secrets.map(sealed);
const imports = template.imports.map((group) => ({ group, secrets: group.secrets.map(sealed) }));

const open = ({ secret, aad, stored }: Sealed): Secret => {
  const [secretValue, secretComment] = openPartsWithDataKey(key, stored, aad, 2) as [string, string];
  return { ...secret, secretValue, secretComment };
};
const copy = ({ secret }: Sealed): Secret => ({ ...secret });

const build = (each: (item: Sealed) => Secret): ListBody => ({
  secrets: folder.map(each),
  imports: imports.map(({ group, secrets }) => ({ ...group, secrets: secrets.map(each) })),
});

const database = process.env.FLOOR_DATABASE_URL
  ? (await openDatabase({ databaseUrl: process.env.FLOOR_DATABASE_URL })).db
  : undefined;
const folders = JSON.parse(process.env.FLOOR_FOLDERS ?? "null") as { folder: string; imports: string[] } | null;
const rowCount = folder.length + imports.reduce((sum, { secrets }) => sum + secrets.length, 0);

/** The list's read of rows; a read that does not bring every secret of the body fails the request. */
const readRows = async () => {
  if (!database || !folders) throw new Error("/sealed-read needs FLOOR_DATABASE_URL and FLOOR_FOLDERS");
  const rows = await listSecretsOfFolders(database, [folders.folder, ...folders.imports]);
  if (rows.length !== rowCount) throw new Error("the rows read are not the body's secrets");
};

const ROUTES = new Set(["/sealed", "/plain", "/sealed-read"]);

const respond = async (url: string | undefined, res: ServerResponse) => {
  if (!url || !ROUTES.has(url)) {
    res.writeHead(404).end();
    return;
  }
  if (url === "/sealed-read") await readRows();
  const json = Buffer.from(JSON.stringify(build(url === "/plain" ? copy : open)));
  res.writeHead(200, {
    "content-type": "application/json; charset=utf-8",
    "content-length": json.length,
    etag: strongEtag(json),
  });
  res.end(json);
};

const server = createServer((req, res) => void respond(req.url, res).catch(() => res.writeHead(500).end()));
listenForBench(server);
