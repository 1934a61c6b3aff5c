/**
 * Copies `text` with the Clipboard API; false where the page may not (an insecure origin, a refused
 * permission), so the caller can offer the keyboard instead.
 */
export const copyText = async (text: string) => {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
};
