/** Standard base64 alphabet with padding only at the end; the length check completes the test. */
const ALPHABET = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Whether a string is padded standard base64. The same as matching groups of four characters with
 * an optional padded last group, but one linear scan: KMS payloads of several KiB are checked on
 * every request.
 */
export const isBase64 = (value: string) => value.length % 4 === 0 && ALPHABET.test(value);
