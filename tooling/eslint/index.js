import js from "@eslint/js";
import tseslint from "typescript-eslint";

/** Shared flat config: type-checked TypeScript, configuration read only in env.ts. */
export const keywardConfig = (tsconfigRootDir) =>
  tseslint.config(
    { ignores: ["dist/**", "node_modules/**", "*.config.*", "openapi.json"] },
    js.configs.recommended,
    ...tseslint.configs.recommendedTypeChecked,
    {
      languageOptions: { parserOptions: { projectService: true, tsconfigRootDir } },
      rules: {
        "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
        "@typescript-eslint/consistent-type-imports": "error",
        "@typescript-eslint/no-floating-promises": "error",
        "@typescript-eslint/require-await": "off",
        "@typescript-eslint/only-throw-error": "off",
        "@typescript-eslint/no-empty-object-type": ["error", { allowInterfaces: "with-single-extends" }],
        "no-restricted-properties": [
          "error",
          { object: "process", property: "env", message: "Read configuration in src/env.ts only." },
        ],
      },
    },
    {
      // State lives in AppDeps (built by main.ts), so two apps in one process never share it.
      files: ["src/modules/**/*.ts"],
      ignores: ["**/*.test.ts"],
      rules: {
        "no-restricted-syntax": [
          "error",
          {
            selector: ":matches(Program, ExportNamedDeclaration) > VariableDeclaration[kind='let']",
            message: "No module-level mutable state in src/modules: keep it in AppDeps.",
          },
          {
            selector:
              ":matches(Program, ExportNamedDeclaration) > VariableDeclaration > VariableDeclarator > NewExpression[callee.name=/^(Map|Set|WeakMap|WeakSet)$/]",
            message: "No module-level caches in src/modules: keep them in AppDeps.",
          },
        ],
      },
    },
    {
      files: ["**/env.ts", "test/**", "bench/**", "scripts/**"],
      rules: { "no-restricted-properties": "off" },
    },
    {
      files: ["test/**", "bench/**", "**/*.test.ts"],
      rules: {
        "@typescript-eslint/no-unsafe-assignment": "off",
        "@typescript-eslint/no-unsafe-member-access": "off",
        "@typescript-eslint/no-non-null-assertion": "off",
        "@typescript-eslint/no-unsafe-argument": "off",
      },
    },
  );
