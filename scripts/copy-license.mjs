// `prepack` of every package: puts the repository's LICENSE into the package being packed (npm
// runs it in the package's folder), so each tarball carries the license text without a second
// copy in the repository (the copies are ignored by git).
import { copyFileSync } from 'node:fs';

copyFileSync(new URL('../LICENSE', import.meta.url), 'LICENSE');
