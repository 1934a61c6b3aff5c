import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { keywardServerBundle } from "@keyward/test-services";

const serverDir = fileURLToPath(new URL("../../server", import.meta.url));

const waitForPort = (child: ChildProcess) =>
  new Promise<number>((resolve, reject) => {
    let output = "";
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${output}`)), 60_000);
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      // The line that says the server listens: "keyward listening" or "keyward serving <url>".
      const match = /"port":(\d+)[^\n]*keyward (?:listening|serving)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${output}`));
    });
  });

export type ServerProcess = { url: string; port: number; stop: () => Promise<void> };

/**
 * A real Keyward server, built as `pnpm build` builds it (keywardServerBundle: once for the current
 * sources), as a child process in a process group of its own (so stopping it stops every process it
 * started), on `port` (0: one the OS picks).
 */
export const startServer = async ({
  port,
  dataDir,
  env = {},
}: {
  port: number;
  dataDir: string;
  env?: Record<string, string>;
}): Promise<ServerProcess> => {
  const { main } = await keywardServerBundle();
  const child = spawn(process.execPath, [main], {
    cwd: serverDir,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PORT: String(port),
      HOST: "127.0.0.1",
      DATA_DIR: dataDir,
      LOG_LEVEL: "info",
      // The lease target listens on loopback.
      ALLOW_PRIVATE_OUTBOUND: "loopback",
      // A test's database is small; a small buffer pool starts on about 60% of the CPU of the default.
      PGLITE_SHARED_BUFFERS: "16MB",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // Already gone.
    }
  };
  const listening = await waitForPort(child).catch((error: unknown) => {
    signalGroup("SIGKILL");
    throw error;
  });
  return {
    url: `http://127.0.0.1:${listening}`,
    port: listening,
    stop: async () => {
      signalGroup("SIGTERM");
      // A server that does not drain in time (an open stream, say) is killed.
      const killer = setTimeout(() => signalGroup("SIGKILL"), 10_000);
      await exited;
      clearTimeout(killer);
      // The group's other processes (a cluster's workers) go with it.
      signalGroup("SIGKILL");
    },
  };
};
