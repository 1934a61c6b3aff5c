import { keywardConfig } from "@keyward/eslint-config";

export default [
  ...keywardConfig(import.meta.dirname),
  // Test tooling like the apps' test/ folders: it hands the environment on to apt-get, it reads no configuration.
  { files: ["src/**"], rules: { "no-restricted-properties": "off" } },
];
