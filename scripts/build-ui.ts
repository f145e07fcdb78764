// Bundles flags-server's web UI (packages/server/ui) into packages/server/dist/ui with esbuild:
// one script and one style sheet, no source maps in the package, nothing loaded from elsewhere.
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const UI_SOURCE = fileURLToPath(new URL('../packages/server/ui/', import.meta.url));
/** Where flags-server looks for the bundle (see `features/ui/routes.ts`). */
export const UI_OUTPUT = fileURLToPath(new URL('../packages/server/dist/ui/', import.meta.url));

/** Writes `app.js` and `app.css` into `UI_OUTPUT`. */
export async function buildUi(): Promise<void> {
  await mkdir(UI_OUTPUT, { recursive: true });
  await build({
    entryPoints: { app: `${UI_SOURCE}main.ts`, style: `${UI_SOURCE}style.css` },
    outdir: UI_OUTPUT,
    entryNames: '[name]',
    bundle: true,
    format: 'esm',
    target: ['es2022'],
    minify: true,
    legalComments: 'linked',
    logLevel: 'warning',
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  buildUi().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
