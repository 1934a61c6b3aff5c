const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const IN_ALPHABET = new Uint8Array(128);
for (let i = 0; i < ALPHABET.length; i += 1) IN_ALPHABET[ALPHABET.charCodeAt(i)] = 1;
const PAD = 61; // "="

/**
 * Whether a string is padded standard base64: groups of four alphabet characters, with one or two
 * "=" only at the very end. One pass over the characters, no regular expression: KMS payloads of
 * several KiB are checked on every request, and a character-class loop is about twice as fast.
 */
export const isBase64 = (value: string) => {
  if (value.length % 4 !== 0) return false;
  let end = value.length;
  if (end > 0 && value.charCodeAt(end - 1) === PAD) end -= value.charCodeAt(end - 2) === PAD ? 2 : 1;
  for (let i = 0; i < end; i += 1) {
    const code = value.charCodeAt(i);
    if (code > 127 || IN_ALPHABET[code] === 0) return false;
  }
  return true;
};
