import type { SecretRow } from "./secret.repository";

/**
 * The characters of a sealed value that name it: after the "d1:" version prefix, the first 12
 * base64 characters are 72 of its IV's 96 random bits — a value sealed again (rewritten, rotated,
 * restored) gets a new IV, so a name never outlives the ciphertext it was taken from. Twelve is
 * below the length at which V8 makes a slice a view into its parent, so the name is a copy and
 * never keeps the row's ciphertext alive.
 */
const NAME_FROM = 3;
const NAME_TO = NAME_FROM + 12;
const nameOf = (row: Pick<SecretRow, "encrypted_fields" | "encrypted_value">) =>
  (row.encrypted_fields ?? row.encrypted_value ?? "").slice(NAME_FROM, NAME_TO);

/**
 * Sealed values found to hold no secret reference, by name. A streamed list opens each value to look
 * for a reference before its first byte and drops it (holding 10,000 plaintexts until written would
 * take a third of the body's size again), then opens it again to write it; a value already found
 * reference-free — by an earlier list of the folder, or the same list asked again for a 304 — is not
 * opened for the look. Only the absence of a reference is remembered: a value with one is expanded
 * every time, under the caller's own rights. Bounded: past `max` names it starts afresh (~60 bytes a
 * name), and a value not remembered is merely opened once more.
 */
export const createReferenceFreeMemo = (max = 100_000) => {
  let known = new Set<string>();
  return {
    has: (row: Pick<SecretRow, "encrypted_fields" | "encrypted_value">) => known.has(nameOf(row)),
    add: (row: Pick<SecretRow, "encrypted_fields" | "encrypted_value">) => {
      const name = nameOf(row);
      if (name.length < NAME_TO - NAME_FROM) return;
      if (known.size >= max) known = new Set();
      known.add(name);
    },
    size: () => known.size,
  };
};

export type ReferenceFreeMemo = ReturnType<typeof createReferenceFreeMemo>;
