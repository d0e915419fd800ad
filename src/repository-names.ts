/**
 * How a job's repositories are named, everywhere from the request to the model's paths
 * (docs/code-context.mdx): the project's own repository is `docs` in `changes[].repository` and
 * in tools, and each context repository's files appear to the model under `_context/<name>/`.
 * Named here once, at the base, so that the agent (which imports nothing above the base) and the
 * services spell them alike.
 */

/** The name of the project's own repository: no context repository may take it. */
export const DOCS_REPOSITORY = 'docs';
/** The folder context repositories appear under in the agent's tree. */
export const CONTEXT_DIR = '_context';

/** Where a file of `repository` appears to the model: the docs' at its path, a context repository's under `_context/<name>/`. */
export const shownPath = (repository: string, path: string): string =>
  repository === DOCS_REPOSITORY ? path : `${CONTEXT_DIR}/${repository}/${path}`;
