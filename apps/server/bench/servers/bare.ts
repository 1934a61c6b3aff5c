import { createServer } from "node:http";
import { IDENTITY_FIXTURE } from "./fixture";
import { listenForBench } from "./announce";

/** Baseline: node:http answering the same JSON with no framework at all. */
const body = JSON.stringify({ identity: IDENTITY_FIXTURE });
const server = createServer((_req, res) => {
  res.writeHead(200, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(body) });
  res.end(body);
});
listenForBench(server);
