import { Stream } from "node:stream";
import type { Response } from "express";

/** One Server-Sent Events frame: its `id`, `event` and `data` lines, then a blank line. */
export type SseEvent = { id?: number | string; event: string; data?: string };

const frameOf = (event: SseEvent) =>
  `${event.id !== undefined ? `id: ${event.id}\n` : ""}event: ${event.event}\n${
    event.data !== undefined ? `data: ${event.data}\n` : ""
  }\n`;

/**
 * A handler's body that takes the response over. ts-rest pipes a stream body into the response;
 * this one writes nothing itself and hands the response to `serve`, which answers it (headers
 * included) for as long as it likes.
 */
class TakenOverBody extends Stream {
  constructor(private readonly serve: (res: Response) => Promise<void> | void) {
    super();
  }

  override pipe<W extends NodeJS.WritableStream>(destination: W): W {
    void this.serve(destination as unknown as Response);
    return destination;
  }
}

export const takeOverResponse = (serve: (res: Response) => Promise<void> | void): Stream => new TakenOverBody(serve);

export type SseOptions = {
  /**
   * Past this many bytes waiting in the response's buffer the reader does not keep up: the
   * connection is cut (a client reconnects, with its `Last-Event-ID`).
   */
  maxBufferedBytes: number;
  /** Told when a slow reader is cut, before the connection closes. */
  onSlowReader?: () => void;
};

/**
 * A Server-Sent Events stream over one response: opened with its headers, written frame by frame,
 * kept alive by a heartbeat, and closed when the client goes (or `end`). Writes after the close are
 * dropped; close listeners run once, whichever side ended it.
 */
export class SseStream {
  private ended = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly closeListeners: (() => void)[] = [];

  constructor(
    private readonly res: Response,
    private readonly options: SseOptions,
  ) {
    res.on("close", () => {
      this.ended = true;
      clearTimeout(this.timer);
      for (const listener of this.closeListeners.splice(0)) listener();
    });
  }

  /** Whether the connection is gone. */
  get closed() {
    return this.ended;
  }

  onClose(listener: () => void) {
    this.closeListeners.push(listener);
  }

  /** Answers with a JSON body instead of a stream (only before `open`). */
  refuse(status: number, headers: Record<string, string>, body: unknown) {
    if (this.ended) return;
    this.res.writeHead(status, { "Content-Type": "application/json", ...headers });
    this.res.end(JSON.stringify(body));
  }

  /** The stream's headers; `keepAlive: false` leaves the connection to close after it (a draining server). */
  open(options: { keepAlive: boolean }) {
    this.res.writeHead(200, {
      "Content-Type": "text/event-stream",
      "Cache-Control": "no-cache",
      "X-Accel-Buffering": "no",
      ...(options.keepAlive ? { Connection: "keep-alive" } : {}),
    });
  }

  /** A comment line, which clients ignore. */
  comment(text: string) {
    this.write(`: ${text}\n\n`);
  }

  send(event: SseEvent) {
    this.write(frameOf(event));
  }

  end() {
    if (!this.ended) this.res.end();
  }

  /**
   * Every `intervalMs`, `ping` is sent and then `afterPing` runs; the next beat is timed once it has
   * answered, and it answers false to stop the heartbeat. The heartbeat stops when the stream closes.
   */
  heartbeat(intervalMs: number, ping: SseEvent, afterPing: () => Promise<boolean> | boolean = () => true) {
    const beat = () => {
      if (this.ended) return;
      this.send(ping);
      void Promise.resolve(afterPing()).then(
        (going) => {
          if (going && !this.ended) this.timer = setTimeout(beat, intervalMs);
        },
        () => undefined,
      );
    };
    this.timer = setTimeout(beat, intervalMs);
  }

  private write(text: string) {
    if (this.ended) return;
    this.res.write(text);
    if (this.res.writableLength > this.options.maxBufferedBytes) {
      this.options.onSlowReader?.();
      this.res.destroy();
    }
  }
}
