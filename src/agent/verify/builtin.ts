/**
 * The built-in checks of verification (SPEC §19), every job, no configuration: `pages`,
 * `navigation`, `links`, `snippets`, `openapi`, `redirects`. Each says `skipped` on a site kind
 * it does not read.
 */
import { mintlifyLinksCheck } from './mintlify-links.ts';
import { mintlifyNavigationCheck } from './mintlify-navigation.ts';
import { mintlifyOpenapiCheck } from './mintlify-openapi.ts';
import { mintlifyPagesCheck } from './mintlify-pages.ts';
import { mintlifyRedirectsCheck } from './mintlify-redirects.ts';
import { mintlifySnippetsCheck } from './mintlify-snippets.ts';
import type { Check } from './types.ts';

/** The built-in checks, in the order they run (parse problems first: the others need the pages). */
export function builtinChecks(): Check[] {
  return [
    mintlifyPagesCheck,
    mintlifyNavigationCheck,
    mintlifyLinksCheck,
    mintlifySnippetsCheck,
    mintlifyOpenapiCheck,
    mintlifyRedirectsCheck,
  ];
}
