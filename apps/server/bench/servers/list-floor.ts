import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { openPartsWithDataKey, sealPartsWithDataKey } from "../../src/crypto/data-keys";
import { strongEtag } from "../../src/http/json-response";
import { secretAad } from "../../src/modules/secrets/secret-crypto";
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

const server = createServer((req, res) => {
  if (req.url !== "/sealed" && req.url !== "/plain") {
    res.writeHead(404).end();
    return;
  }
  const json = Buffer.from(JSON.stringify(build(req.url === "/sealed" ? open : copy)));
  res.writeHead(200, {
    "content-type": "application/json; charset=utf-8",
    "content-length": json.length,
    etag: strongEtag(json),
  });
  res.end(json);
});
listenForBench(server);
