/** A background job: started once per process by name with the process's dependencies, stopped on shutdown. */
export type Job<Deps> = { name: string; start: (deps: Deps) => () => Promise<void> };

/** setTimeout chaining: a slow pass delays the next one instead of overlapping it. */
export const loop = (everyMs: number, work: () => Promise<unknown>, onError: (error: unknown) => void) => {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const run = () => {
    if (stopped) return;
    running = work()
      .then(() => undefined, onError)
      .finally(() => {
        if (!stopped) timer = setTimeout(run, everyMs);
      });
  };
  run();
  return async () => {
    stopped = true;
    clearTimeout(timer);
    await running;
  };
};
