import { keywardConfig } from "@keyward/eslint-config";

/** Imports that would run a layer upward (see docs/architecture.md, "The server's layers"). */
const upward = (layers, why) => ({
  patterns: [{ regex: `^(\\./|(\\.\\./)+)(${layers.join("|")})(/|$)`, message: why }],
});

const lower = [
  "src/context.ts",
  "src/http/**/*.ts",
  "src/db/**/*.ts",
  "src/lib/**/*.ts",
  "src/crypto/**/*.ts",
  "src/permissions/**/*.ts",
];

export default [
  ...keywardConfig(import.meta.dirname),
  {
    files: lower,
    rules: {
      "no-restricted-imports": [
        "error",
        upward(
          ["modules", "app", "runtime"],
          "context, http, db, lib, crypto and permissions never import modules, app or runtime.",
        ),
      ],
    },
  },
  {
    files: [
      "src/db/**/*.ts",
      "src/lib/**/*.ts",
      "src/crypto/**/*.ts",
      "src/permissions/**/*.ts",
      "src/env.ts",
      "src/errors.ts",
    ],
    rules: {
      "no-restricted-imports": [
        "error",
        upward(
          ["modules", "app", "runtime", "context", "http"],
          "db, lib, crypto, permissions, env and errors sit below context and http.",
        ),
      ],
    },
  },
  {
    files: ["src/modules/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        upward(["app", "runtime"], "Modules never import the composition root or the runtime."),
      ],
    },
  },
  {
    files: ["src/app/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", upward(["runtime"], "The composition root never imports the runtime.")],
    },
  },
];
