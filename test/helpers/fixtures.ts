import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * The shared fixtures: the real 317-page Mintlify site lives beside the repository, in
 * `../shared/fixtures` of the checkout, or wherever `DOCWRIGHT_FIXTURES_DIR` says. They are not
 * part of the repository (too large, another licence).
 */
export const FIXTURES_DIR = process.env.DOCWRIGHT_FIXTURES_DIR
  ? path.resolve(process.env.DOCWRIGHT_FIXTURES_DIR)
  : path.resolve(import.meta.dirname, '../../../shared/fixtures');

export const MINTLIFY_FIXTURE = path.join(FIXTURES_DIR, 'mintlify-docs');

/**
 * `false` when the Mintlify fixture is present, else the reason to skip `what` (shown loudly in
 * the run's summary by scripts/run-tests.ts). With `DOCWRIGHT_REQUIRE_FIXTURES=1` a missing
 * fixture is an error instead, for a run that must not pass without those cases. A fresh clone
 * on its own (no fixtures beside it) runs everything else.
 */
export function mintlifyFixtureSkip(what: string): false | string {
  if (existsSync(MINTLIFY_FIXTURE)) return false;
  const missing = `${MINTLIFY_FIXTURE} is absent (put the shared fixtures beside the checkout, or set DOCWRIGHT_FIXTURES_DIR)`;
  if (process.env.DOCWRIGHT_REQUIRE_FIXTURES === '1')
    throw new Error(`DOCWRIGHT_REQUIRE_FIXTURES=1: ${missing}, so ${what} cannot run`);
  return `${missing}: skipping ${what}`;
}
