/**
 * The one formatter configuration of the workspace (`pnpm format`, checked by `pnpm format:check` in CI).
 * @type {import("prettier").Config}
 */
export default {
  printWidth: 120,
  trailingComma: "all",
  arrowParens: "always",
};
