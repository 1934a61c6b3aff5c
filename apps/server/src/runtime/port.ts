import { createServer } from "node:net";

/** The one line a start that cannot take its port prints, naming the address and what to change. */
export const cannotListenMessage = (host: string, port: number, error: NodeJS.ErrnoException) => {
  const address = host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
  const reason =
    error.code === "EADDRINUSE"
      ? "the port is in use (set PORT to another)"
      : error.code === "EACCES"
        ? "permission denied (ports below 1024 need privileges; set PORT to another)"
        : error.code === "EADDRNOTAVAIL"
          ? "the address is not one of this machine's (set HOST to another)"
          : `${error.code ?? "error"}: ${error.message}`;
  return `Keyward cannot listen on ${address}: ${reason}`;
};

/**
 * Whether this process could listen on host:port, found by listening and closing at once: a start
 * checks before it migrates or opens its database, so a port in use costs nothing and says so.
 * Resolves to the error, or undefined when the port is free. Port 0 (any free port) always is.
 */
export const probePort = (host: string, port: number) =>
  new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
    const probe = createServer();
    probe.once("error", (error: NodeJS.ErrnoException) => resolve(error));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(undefined)));
  });

/** Print the one line and end the process (exit code 1). */
export const exitCannotListen = (host: string, port: number, error: NodeJS.ErrnoException): never => {
  process.stderr.write(`${cannotListenMessage(host, port, error)}\n`);
  process.exit(1);
};

/** Before anything slow: end the start with the one line when the port cannot be taken. */
export const ensurePortFree = async (host: string, port: number) => {
  const error = await probePort(host, port);
  if (error) exitCannotListen(host, port, error);
};
