import type { UserConfig } from "vitest/config";

export declare const keywardVitestConfig: (
  name: string,
  extra?: { setupFiles?: string[]; globalSetup?: string[]; include?: string[]; slowFirst?: string[] },
) => UserConfig;
