import type { Linter } from "eslint";

/** The server's flat ESLint configuration (eslint.config.js), typed for the layer test. */
declare const config: Linter.Config[];
export default config;
