/**
 * A scripted model that solves the built-in suite (src/eval/builtin): for each task, the tool
 * calls a careful agent would make. It scores 100 on every task, which shows that every check of
 * the suite can be met by a reasonable change; bench/eval.ts times the suite with it.
 */
import { loadBuiltinSuite } from '../../src/eval/suite.ts';
import { isInvalid } from '../../src/eval/task.ts';
import { type ReplyStep, type ScriptedToolCall, toolCall, toolCalls } from '../doubles/script.ts';
import type { TaskPlan } from '../doubles/task-model.ts';

const read = (...paths: string[]): ReplyStep =>
  toolCalls(...paths.map((path) => ({ name: 'read_file', input: { path } })));
const edit = (path: string, old_string: string, new_string: string): ScriptedToolCall => ({
  name: 'edit_file',
  input: { path, old_string, new_string },
});
const finish = (title: string, summary: string) => toolCall('finish', { title, summary });
const noChange = (why: string) => [finish('No documentation change needed', why)];

/** The steps that solve each built-in task, by task id. */
export const BUILTIN_SOLUTIONS: Record<string, ReplyStep[]> = {
  'new-option': [
    read('configuration.mdx', 'api/create-link.mdx'),
    toolCalls(
      edit(
        'configuration.mdx',
        '| `--slug-length` | `6` | Length of generated slugs, from 4 to 16. Custom slugs are not affected. |\n',
        '| `--slug-length` | `6` | Length of generated slugs, from 4 to 16. Custom slugs are not affected. |\n| `--max-url-length` | `2048` | Longest URL accepted, in characters. Longer URLs are refused with `400 Bad Request`. |\n',
      ),
      edit(
        'api/create-link.mdx',
        'It must start with `http://` or `https://`.',
        'It must start with `http://` or `https://`, and be no longer than the server’s `--max-url-length` (2048 characters by default).',
      ),
    ),
    finish(
      'Document --max-url-length',
      'Adds the option to the configuration table and the limit to the create-link page.',
    ),
  ],
  'changed-default': [
    read('configuration.mdx', 'api/create-link.mdx'),
    toolCalls(
      edit('configuration.mdx', '| `--slug-length` | `6` |', '| `--slug-length` | `8` |'),
      edit('api/create-link.mdx', '6 characters long', '8 characters long'),
    ),
    finish('Document the new default slug length, 8', 'Updates the default of --slug-length.'),
  ],
  'renamed-endpoint': [
    read('api/stats.mdx'),
    toolCalls(edit('api/stats.mdx', 'api: "GET /api/stats"', 'api: "GET /api/metrics"')),
    finish('Document GET /api/metrics', 'The statistics endpoint was renamed.'),
  ],
  'removed-endpoint': [
    read('docs.json', 'changelog.mdx'),
    toolCalls(
      { name: 'delete_file', input: { path: 'api/delete-link.mdx' } },
      edit('docs.json', ', "api/delete-link"', ''),
      // Old links to the page keep working (verification asks for it: docs/verification.mdx).
      edit(
        'docs.json',
        '"colors": { "primary": "#0B57D0" },',
        '"colors": { "primary": "#0B57D0" },\n  "redirects": [{ "source": "/api/delete-link", "destination": "/changelog" }],',
      ),
      edit(
        'changelog.mdx',
        '## 1.4.0\n',
        '## 1.5.0\n\n- `DELETE /api/links/{slug}` is removed. To remove a link, stop the server and edit the data file.\n\n## 1.4.0\n',
      ),
    ),
    finish(
      'Remove the delete-link endpoint from the docs',
      'The endpoint is gone; the changelog says how to remove links now.',
    ),
  ],
  'new-page': [
    read('docs.json', 'configuration.mdx'),
    toolCalls(
      {
        name: 'write_file',
        input: {
          path: 'guides/webhooks.mdx',
          content: [
            '---',
            'title: "Webhooks"',
            'description: "Be told of every new link."',
            '---',
            '',
            'Start the server with `--webhook-url` and Pocketlink POSTs an event to that URL after each new link:',
            '',
            '```sh',
            'pocketlink serve --webhook-url https://hooks.example.com/pocketlink',
            '```',
            '',
            '```json',
            '{ "event": "link.created", "link": { "slug": "k3Xq9Z", "url": "https://example.com", "created_at": "2024-05-02T09:30:00+00:00", "visits": 0 } }',
            '```',
            '',
            'A delivery times out after 5 seconds. A failed delivery is logged to stderr and not retried.',
            '',
          ].join('\n'),
        },
      },
      edit('docs.json', '"guides/backups"', '"guides/backups", "guides/webhooks"'),
      edit(
        'configuration.mdx',
        'Custom slugs are not affected. |\n',
        'Custom slugs are not affected. |\n| `--webhook-url` | none | URL told of every new link. See [Webhooks](/guides/webhooks). |\n',
      ),
    ),
    finish('Add a webhooks guide', 'Documents --webhook-url on a new guide page.'),
  ],
  deprecation: [
    read('configuration.mdx', 'quickstart.mdx', 'guides/backups.mdx'),
    toolCalls(
      edit(
        'configuration.mdx',
        '--data-file /var/lib/pocketlink/links.json',
        '--database /var/lib/pocketlink/links.json',
      ),
      edit(
        'configuration.mdx',
        '| `--data-file` | `pocketlink.json` |',
        '| `--database` | `pocketlink.json` |',
      ),
      edit(
        'configuration.mdx',
        '<Note>\n',
        '<Warning>\n  `--data-file` is deprecated: it still works in 1.x, with a warning, and will be removed in 2.0. Use `--database`.\n</Warning>\n\n<Note>\n',
      ),
      edit(
        'quickstart.mdx',
        'pocketlink serve --data-file links.json',
        'pocketlink serve --database links.json',
      ),
      edit('guides/backups.mdx', '(`--data-file`,', '(`--database`,'),
    ),
    finish(
      'Document --database, deprecate --data-file',
      'Renames the option in every page and notes the deprecation.',
    ),
  ],
  'internal-refactor': noChange('A refactor of the slug generator: nothing users do or see changes.'),
  'test-only': noChange('Only tests change.'),
  typo: [
    read('quickstart.mdx'),
    toolCalls(edit('quickstart.mdx', 'You recieve', 'You receive')),
    finish('Fix a typo on the Quickstart page', '"recieve" → "receive".'),
  ],
  contradiction: [
    read('index.mdx', 'guides/custom-slugs.mdx', 'api/create-link.mdx'),
    toolCalls(
      edit(
        'index.mdx',
        'Slugs are case-sensitive: `/Docs` and `/docs` are different links.',
        'Slugs are case-insensitive: `/Docs` and `/docs` are the same link.',
      ),
      edit(
        'guides/custom-slugs.mdx',
        '- Slugs are case-sensitive: `Docs` and `docs` are two different slugs.',
        '- Slugs are case-insensitive: a custom slug is stored in lower case, so `Docs` and `docs` are the same slug.',
      ),
      edit('api/create-link.mdx', '(letters and digits)', '(lower-case letters and digits)'),
    ),
    finish('Document case-insensitive slugs', 'Slugs no longer depend on case.'),
  ],
  'new-response-field': [
    read('api/get-link.mdx', 'api/create-link.mdx'),
    toolCalls(
      edit(
        'api/get-link.mdx',
        '"visits": 12\n}',
        '"visits": 12,\n  "last_visited_at": "2024-05-09T17:02:11+00:00"\n}',
      ),
      edit(
        'api/get-link.mdx',
        '  How many times the short link was followed.\n</ResponseField>\n',
        '  How many times the short link was followed.\n</ResponseField>\n\n<ResponseField name="last_visited_at" type="string | null">\n  When the short link was last followed (ISO 8601, UTC); `null` until it is first followed.\n</ResponseField>\n',
      ),
      edit('api/create-link.mdx', '"visits": 0\n}', '"visits": 0,\n  "last_visited_at": null\n}'),
    ),
    finish('Document last_visited_at', 'Adds the field to the link responses.'),
  ],
  'dependency-bump': noChange('A development dependency changed; users see nothing new.'),
  'bug-fix-matching-docs': noChange('The documentation already says 4 to 16; the code now matches it.'),
  performance: noChange('Slugs are generated faster and look the same.'),
};

/** The plans of the scripted model: each task's steps, matched by its change's title (or its instruction). */
export async function builtinPlans(
  solutions: Record<string, ReplyStep[]> = BUILTIN_SOLUTIONS,
): Promise<TaskPlan[]> {
  const suite = await loadBuiltinSuite();
  return suite.tasks.map((task) => {
    if (isInvalid(task)) throw new Error(`built-in task ${task.id} is invalid: ${task.error}`);
    const steps = solutions[task.id];
    if (!steps) throw new Error(`no solution for built-in task ${task.id}`);
    return { match: task.change ? `Title: ${task.change.title}` : task.instruction, steps };
  });
}
