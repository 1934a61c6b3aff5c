/**
 * One shared instance of each of the few strings that many cached entries repeat (an organization's
 * id, a role, an auth method, a grants fingerprint). A string read from a row is a fresh copy every
 * time, so 100,000 cached tokens of one organization would otherwise hold 100,000 copies of its id.
 * Bounded: past `max` distinct strings it starts afresh (a string is then merely not shared).
 */
export const createInterner = (max = 10_000) => {
  let known = new Map<string, string>();
  return <S extends string | null>(value: S): S => {
    if (value === null) return value;
    const shared = known.get(value);
    if (shared !== undefined) return shared as S;
    if (known.size >= max) known = new Map();
    known.set(value, value);
    return value;
  };
};
