import { readFileSync, readdirSync, readlinkSync } from "node:fs";

/**
 * Whether `pid` itself holds the socket listening on `port` (Linux: its descriptors against
 * /proc/net/tcp). A port picked free can be taken by another test's server before ours binds it; that
 * one would answer the readiness probe while ours exits on EADDRINUSE.
 */
export const listensOn = (pid: number, port: number) => {
  const sockets = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      if (target.startsWith("socket:[")) sockets.add(target.slice(8, -1));
    } catch {
      // Closed meanwhile.
    }
  }
  const hexPort = port.toString(16).toUpperCase().padStart(4, "0");
  return readFileSync("/proc/net/tcp", "utf8")
    .split("\n")
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .some((fields) => fields[1]?.endsWith(`:${hexPort}`) && fields[3] === "0A" && sockets.has(fields[9] ?? ""));
};
