import type { AppDeps } from "../context";

/** A background job: started once per process, stopped on shutdown. */
export type Job = { name: string; start: (deps: AppDeps) => () => Promise<void> };

const jobs: Job[] = [];

/** Modules register their jobs (e.g. lease revocation) here. */
export const registerJob = (job: Job) => jobs.push(job);

export const startJobs = (deps: AppDeps) => {
  const stops = jobs.map((job) => job.start(deps));
  return async () => {
    await Promise.all(stops.map((stop) => stop()));
  };
};
