import { readFileSync } from 'node:fs';

// Read, not imported: the same relative path holds from src/ and from the built dist/, and a JSON
// import is still experimental (it warns) on the Node 22 releases the package supports.
const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

export const VERSION: string = pkg.version;
