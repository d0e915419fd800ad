/**
 * `import … from 'docwright'`: the typed API client (also `docwright/client`) and the package
 * version. The server itself is the `docwright` command.
 */
export * from './client/index.ts';
export { VERSION } from './version.ts';
