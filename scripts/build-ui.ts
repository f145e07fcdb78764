// Bundles flags-server's web UI (packages/server/ui) into packages/server/dist/ui with esbuild:
// one script and one style sheet, and the insights dashboard's script; no source maps in the
// package, nothing loaded from elsewhere.
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const UI_SOURCE = fileURLToPath(new URL('../packages/server/ui/', import.meta.url));
/** Where flags-server looks for the bundle (see `features/ui/routes.ts`). */
export const UI_OUTPUT = fileURLToPath(new URL('../packages/server/dist/ui/', import.meta.url));

/**
 * Writes `app.js`, `style.css` and `dashboard.js` into `UI_OUTPUT`, each file renamed into place
 * whole, so that a server starting during a rebuild (another test's) never reads half a bundle.
 */
export async function buildUi(): Promise<void> {
  await mkdir(UI_OUTPUT, { recursive: true });
  const { outputFiles } = await build({
    write: false,
    entryPoints: {
      app: `${UI_SOURCE}main.ts`,
      style: `${UI_SOURCE}style.css`,
      // The stand-alone insights dashboard's script, which `/insights` inlines.
      dashboard: `${UI_SOURCE}dashboard.ts`,
    },
    outdir: UI_OUTPUT,
    entryNames: '[name]',
    bundle: true,
    format: 'esm',
    target: ['es2022'],
    minify: true,
    legalComments: 'linked',
    logLevel: 'warning',
  });
  for (const file of outputFiles) {
    const target = join(UI_OUTPUT, basename(file.path));
    const temporary = `${target}.${process.pid}.tmp`;
    await writeFile(temporary, file.contents);
    await rename(temporary, target);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  buildUi().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
