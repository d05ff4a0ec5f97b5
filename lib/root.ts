import fs from 'node:fs';
import path from 'node:path';

/**
 * The repository (or image) root: the nearest folder above this file with a package.json. Assets
 * that are not compiled (the player's script and styles, the dashboard) are read from here, so the
 * same code finds them when it runs from TypeScript sources (tsx) and from `dist/` (npm run build).
 */
function findRoot(start: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${start}`);
  }
}

export const ROOT = findRoot(__dirname);
