/**
 * Build step: writes the migrated PGlite template beside the bundle (see db/pglite-template.ts), so a
 * first start on an empty DATA_DIR copies it instead of running initdb and every migration.
 */
import { PGLITE_TEMPLATE, writePgliteTemplate } from "./db/pglite-template";

const started = performance.now();
await writePgliteTemplate(PGLITE_TEMPLATE);
console.log(`wrote ${PGLITE_TEMPLATE} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
