// Makes the built command runnable from a clone: dist/cli/main.cjs executable, and dist/bin/cfghub
// pointing at it, so `export PATH="$PWD/dist/bin:$PATH"` (README, "Try it") finds the build that
// `npm ci` made (through `prepare`), with no npx cache and no second build. Run by `npm run build`.
import { chmodSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const dist = join(dirname(fileURLToPath(import.meta.url)), '../../dist');
chmodSync(join(dist, 'cli/main.cjs'), 0o755);
mkdirSync(join(dist, 'bin'), { recursive: true });
rmSync(join(dist, 'bin/cfghub'), { force: true });
// Relative, so the clone can move; node runs main.cjs from its real path, dist/cli.
symlinkSync('../cli/main.cjs', join(dist, 'bin/cfghub'));
