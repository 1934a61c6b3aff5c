/** One Server-Sent Events frame as the stream sent it (comments left out). */
export type Frame = { id?: string; event?: string; data?: string };

export type OpenedStream = {
  status: number;
  /** The JSON error body when the stream did not open. */
  error?: { statusCode: number; message: unknown; error: string };
  frames: Frame[];
  /** Every byte received, as text (to look for what must never be sent). */
  raw: () => string;
  /** The next frame (after those already taken) that `match` accepts, within `timeoutMs`. */
  next: (match?: (frame: Frame) => boolean, timeoutMs?: number) => Promise<Frame>;
  /** Resolves when the server ended the stream. */
  ended: Promise<void>;
  close: () => void;
};

const parseFrame = (block: string): Frame | undefined => {
  const frame: Frame = {};
  let fields = 0;
  for (const line of block.split("\n")) {
    if (line.startsWith(":") || line === "") continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "id" || field === "event" || field === "data") {
      frame[field] = field === "data" && frame.data !== undefined ? `${frame.data}\n${value}` : value;
      fields += 1;
    }
  }
  return fields > 0 ? frame : undefined;
};

/** POST /api/v1/events/subscribe/project-events as the Kubernetes operator does, read frame by frame. */
export const openEventStream = async (
  baseUrl: string,
  token: string,
  body: { projectId: string; register: unknown },
  headers: Record<string, string> = {},
): Promise<OpenedStream> => {
  const controller = new AbortController();
  const response = await fetch(`${baseUrl}/api/v1/events/subscribe/project-events`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      accept: "text/event-stream",
      "content-type": "application/json",
      ...headers,
    },
    body: JSON.stringify(body),
    signal: controller.signal,
  });
  const frames: Frame[] = [];
  let text = "";
  let taken = 0;
  let wake: (() => void) | undefined;
  if (response.status !== 200) {
    const error = (await response.json()) as OpenedStream["error"];
    return {
      status: response.status,
      error,
      frames,
      raw: () => "",
      next: () => Promise.reject(new Error(`stream not open: ${response.status}`)),
      ended: Promise.resolve(),
      close: () => undefined,
    };
  }
  const ended = (async () => {
    const decoder = new TextDecoder();
    let pending = "";
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        const part = decoder.decode(chunk, { stream: true });
        text += part;
        pending += part;
        let cut: number;
        while ((cut = pending.indexOf("\n\n")) >= 0) {
          const frame = parseFrame(pending.slice(0, cut));
          pending = pending.slice(cut + 2);
          if (frame) frames.push(frame);
        }
        wake?.();
      }
    } catch {
      // Closed by this side.
    }
    wake?.();
  })();
  let done = false;
  void ended.then(() => (done = true));
  const next = async (match: (frame: Frame) => boolean = () => true, timeoutMs = 5_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      while (taken < frames.length) {
        const frame = frames[taken++]!;
        if (match(frame)) return frame;
      }
      if (done) throw new Error(`stream ended; frames: ${JSON.stringify(frames)}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no matching frame within ${timeoutMs} ms; frames: ${JSON.stringify(frames)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  };
  return { status: 200, frames, raw: () => text, next, ended, close: () => controller.abort() };
};

/** The frames that are events (not keep-alives). */
export const isEvent = (frame: Frame) => frame.event !== undefined && frame.event !== "ping";

/** An event frame's data, parsed. */
export const eventData = (frame: Frame) =>
  JSON.parse(frame.data ?? "null") as {
    type: string;
    projectType: string;
    data: { eventType: string; payload: unknown };
  };
