import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { SLOW_CLIENT_MS, StreamedJson, type StreamSink } from "./json-response";

/** A client socket that takes each piece only when the test says so (`take`), like a slow reader. */
const heldClient = () => {
  const received: Buffer[] = [];
  const held: (() => void)[] = [];
  const client = new Writable({
    highWaterMark: 16,
    write(chunk: Buffer, _encoding, done) {
      received.push(chunk);
      held.push(done);
    },
  });
  const take = () => held.splice(0).forEach((done) => done());
  const ended = new Promise<void>((resolve) => client.on("finish", resolve));
  return { client, received, take, ended, text: () => Buffer.concat(received).toString() };
};

const tick = () => new Promise(setImmediate);

/** Writes `count` values, waiting whenever the client falls behind. */
const producer =
  (count: number, fail?: Error) =>
  async ({ out, keepUp }: StreamSink) => {
    out.raw("[");
    for (let i = 0; i < count; i += 1) {
      out.raw(i === 0 ? "" : ",").value({ i, pad: "x".repeat(40_000) });
      if (fail && i === 1) throw fail;
      await keepUp();
    }
    out.raw("]");
  };

describe("StreamedJson", () => {
  it("writes the body piece by piece at the client's pace, then gives its turn back once", async () => {
    let released = 0;
    const failures: unknown[] = [];
    const json = new StreamedJson('"t"', producer(5), {
      release: () => (released += 1),
      failed: (e) => failures.push(e),
      now: () => 0,
      bufferBytes: 1,
    });
    const { client, take, ended, text, received } = heldClient();
    const writing = json.writeTo(client);
    for (let i = 0; i < 5; i += 1) await tick();
    // The producer waits on the client: one piece out, nothing more produced while it is held.
    expect(received).toHaveLength(1);
    expect(released).toBe(0);
    while (!client.writableFinished) {
      take();
      await tick();
    }
    await writing;
    await ended;
    const body = JSON.parse(text()) as { i: number }[];
    expect(body.map((v) => v.i)).toEqual([0, 1, 2, 3, 4]);
    expect(received.length).toBeGreaterThan(2);
    expect(released).toBe(1);
    json.cancel();
    expect(released).toBe(2); // the gate's release is idempotent; StreamedJson calls it again harmlessly
    expect(failures).toEqual([]);
  });

  it("gives the turn back while a slow client keeps it waiting, and finishes the body", async () => {
    let clock = 0;
    let released = 0;
    const json = new StreamedJson('"t"', producer(4), {
      release: () => (released += 1),
      failed: () => undefined,
      now: () => clock,
      bufferBytes: 1,
    });
    const { client, take, text } = heldClient();
    const writing = json.writeTo(client);
    await tick();
    clock += SLOW_CLIENT_MS + 1;
    take();
    await tick();
    expect(released).toBe(1);
    while (!client.writableFinished) {
      take();
      await tick();
    }
    await writing;
    expect((JSON.parse(text()) as unknown[]).length).toBe(4);
  });

  it("cuts the response on a failure of ours and reports it; a client gone is no failure", async () => {
    const failures: unknown[] = [];
    let released = 0;
    const hooks = { release: () => (released += 1), failed: (e: unknown) => failures.push(e), bufferBytes: 1 };
    const broken = new StreamedJson('"t"', producer(5, new Error("key gone")), hooks);
    const first = heldClient();
    const writing = broken.writeTo(first.client);
    first.take();
    await writing;
    expect(first.client.destroyed).toBe(true);
    expect(first.client.writableFinished).toBe(false);
    expect(failures).toEqual([new Error("key gone")]);
    expect(released).toBe(1);

    const left = new StreamedJson('"t"', producer(5), hooks);
    const second = heldClient();
    const writingLeft = left.writeTo(second.client);
    await tick();
    second.client.destroy();
    await writingLeft;
    expect(failures).toHaveLength(1);
    expect(released).toBe(2);
  });
});
