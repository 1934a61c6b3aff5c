import type { Server } from "node:http";

/**
 * Listen on a free loopback port and print `listening <port>`, which the bench runner waits for
 * (lib/processes.ts); on SIGTERM stop accepting, run `cleanup`, and exit.
 */
export const listenForBench = (server: Server, cleanup: () => Promise<void> = async () => undefined) => {
  server.listen(0, "127.0.0.1", () => {
    const address = server.address();
    console.log(`listening ${typeof address === "object" && address ? address.port : 0}`);
  });
  process.on("SIGTERM", () => server.close(() => void cleanup().then(() => process.exit(0))));
};
