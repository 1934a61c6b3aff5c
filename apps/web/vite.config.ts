import { defineConfig } from "vite";
import { precompress } from "./precompress.js";

// `pnpm dev` serves the console with hot reload and sends /api to a running server (KEYWARD_API_URL).
const apiUrl = process.env.KEYWARD_API_URL ?? "http://127.0.0.1:8080";

export default defineConfig({
  plugins: [precompress()],
  server: { proxy: { "/api": { target: apiUrl, changeOrigin: true } } },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    sourcemap: false,
    chunkSizeWarningLimit: 400,
    rollupOptions: {
      // TanStack Query marks its hooks "use client" for server components; a browser bundle ignores it.
      onwarn(warning, warn) {
        if (warning.code === "MODULE_LEVEL_DIRECTIVE") return;
        warn(warning);
      },
    },
  },
});
