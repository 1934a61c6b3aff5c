import { createSocket } from "node:dgram";

/**
 * A DNS server on loopback UDP that answers TXT questions from a map the test fills, and nothing
 * else: enough for ACME dns-01 through ACME_DNS_RESOLVER.
 */
export const startTxtServer = async () => {
  const records = new Map<string, string[]>();
  const socket = createSocket("udp4");
  socket.on("message", (query, peer) => {
    if (query.length < 17) return;
    let offset = 12;
    const labels: string[] = [];
    while (offset < query.length && query[offset]! > 0) {
      const length = query[offset]!;
      labels.push(query.subarray(offset + 1, offset + 1 + length).toString("ascii"));
      offset += length + 1;
    }
    const questionEnd = offset + 5;
    const type = query.readUInt16BE(offset + 1);
    const name = labels.join(".").toLowerCase();
    const answers = type === 16 ? (records.get(name) ?? []) : [];
    const header = Buffer.alloc(12);
    header.writeUInt16BE(query.readUInt16BE(0), 0);
    // Response, authoritative, recursion desired copied; NXDOMAIN when the name has no records.
    header.writeUInt16BE(0x8400 | (query.readUInt16BE(2) & 0x0100) | (records.has(name) ? 0 : 3), 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(answers.length, 6);
    const rrs = answers.map((text) => {
      const data = Buffer.concat([Buffer.from([text.length]), Buffer.from(text, "ascii")]);
      const rr = Buffer.alloc(12);
      rr.writeUInt16BE(0xc00c, 0);
      rr.writeUInt16BE(16, 2);
      rr.writeUInt16BE(1, 4);
      rr.writeUInt32BE(0, 6);
      rr.writeUInt16BE(data.length, 10);
      return Buffer.concat([rr, data]);
    });
    socket.send(Buffer.concat([header, query.subarray(12, questionEnd), ...rrs]), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
  return {
    address: `127.0.0.1:${socket.address().port}`,
    set: (name: string, values: string[]) => records.set(name.toLowerCase(), values),
    remove: (name: string) => records.delete(name.toLowerCase()),
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
};
