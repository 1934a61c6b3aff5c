import { createServer } from "node:http";
import { IDENTITY_FIXTURE } from "./fixture";

/** Baseline: node:http answering the same JSON with no framework at all. */
const body = JSON.stringify({ identity: IDENTITY_FIXTURE });
const server = createServer((_req, res) => {
  res.writeHead(200, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(body) });
  res.end(body);
});
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  console.log(`listening ${typeof address === "object" && address ? address.port : 0}`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
