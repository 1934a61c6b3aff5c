import { randomInt } from "node:crypto";

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** Upper-case runs become their own words, as a decamelising slugifier does. */
const decamelize = (value: string) =>
  value
    .replace(/([A-Z]{2,})(\d+)/g, "$1 $2")
    .replace(/([a-z\d]+)([A-Z]{2,})/g, "$1 $2")
    .replace(/([a-z\d])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-rt-z\d]+)/g, "$1 $2");

/**
 * A generated privilege slug: eight random alphanumerics, decamelised and
 * lower-cased, so `aB3dEf9G` becomes `a-b3d-ef9-g`.
 */
export const generatePrivilegeSlug = () => {
  let id = "";
  for (let i = 0; i < 8; i++) id += ALPHABET[randomInt(ALPHABET.length)];
  return decamelize(id).toLowerCase().trim().split(/\s+/).join("-");
};
