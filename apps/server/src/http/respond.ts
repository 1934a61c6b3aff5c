/** Every success is 200 with the spec's wrapper. */
export const ok = <T>(body: T) => ({ status: 200 as const, body });
