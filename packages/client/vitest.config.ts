import { keywardVitestConfig } from "@keyward/vitest-config";

export default keywardVitestConfig("client");
