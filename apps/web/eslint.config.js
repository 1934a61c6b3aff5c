import { keywardConfig } from "@keyward/eslint-config";

export default keywardConfig(import.meta.dirname);
