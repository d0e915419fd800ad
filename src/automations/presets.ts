/**
 * The presets of the dashboard's `New automation` form (docs/automations.mdx): a starting point each, which
 * the user may change before saving. They are automations' input as the API takes it.
 */
import type { AutomationInput } from './automation.ts';

export interface AutomationPreset {
  /** A stable slug, for the form's choice. */
  id: string;
  /** The preset's label, and the automation's name. */
  name: string;
  /** One sentence for the form, saying when it runs and what it does. */
  description: string;
  automation: AutomationInput;
}

const UPDATE_DOCS = `A code change was merged into one of the repositories this documentation describes. Read the change (its description, the files it touches and their diffs) and the code around it, then update the documentation so that it describes the code as it now is: new or changed options, parameters, endpoints, commands, defaults, errors and behaviour, and examples that would no longer work.

Change only what this code change makes wrong or incomplete, and ground every statement in the code. Keep the existing structure, tone and formatting; add a page only when the change introduces something no page covers, and add it to the navigation.

If the change affects nothing users read (refactoring, tests, internal tooling, CI), make no edit and say why.`;

const CHANGELOG = `Draft a changelog entry for the code changes merged since the previous run (this job's changes).

Add the entry at the top of the documentation's changelog page, following the format of the entries already there (create a changelog page and add it to the navigation if there is none). Give it the date of the latest change. List only what users notice, in plain language, grouped under Added, Changed, Fixed and Removed, one line each with a link to its pull request. Leave out refactoring, tests, dependency updates and internal changes.

If none of the changes is user-visible, make no edit and say so.`;

const BROKEN_LINKS = `Find and fix broken links in the documentation: links to pages that do not exist, anchors to headings that do not exist, and images or files whose paths do not resolve, in the pages and in the navigation.

Point each broken link to the page or heading it meant (a page that was renamed or moved), or, when there is none, remove the link and keep its text. Do not change external links you cannot check, and change nothing else.

If no link is broken, make no edit and say so.`;

const STYLE_GUIDE = `Review the pages changed by this push against the documentation's style guide (a STYLE.md, CONTRIBUTING.md or style page in the repository, whichever there is) and fix what breaks it: headings, terminology, voice and tense, code block languages, link and list style.

Change only the pages this push changed, and only what the guide asks for; never change the meaning of a sentence.

If the repository has no style guide, or the pages already follow it, make no edit and say so.`;

export const AUTOMATION_PRESETS: readonly AutomationPreset[] = [
  {
    id: 'update-docs',
    name: 'Update docs for merged code changes',
    description:
      'Runs for each pull request merged into a context repository, and updates the pages it affects.',
    automation: {
      name: 'Update docs for merged code changes',
      trigger: { type: 'code-change', skipLabels: ['no-docs'] },
      instruction: UPDATE_DOCS,
    },
  },
  {
    id: 'changelog',
    name: 'Draft a changelog entry',
    description:
      'Every Monday at 09:00 UTC, drafts a changelog entry for the changes merged in the week before.',
    automation: {
      name: 'Draft a changelog entry',
      trigger: { type: 'schedule', cron: '0 9 * * 1', timeZone: 'UTC', batch: true },
      instruction: CHANGELOG,
      draft: true,
    },
  },
  {
    id: 'broken-links',
    name: 'Fix broken links',
    description: 'Every Monday at 06:00 UTC, finds broken links and anchors in the docs and fixes them.',
    automation: {
      name: 'Fix broken links',
      trigger: { type: 'schedule', cron: '0 6 * * 1', timeZone: 'UTC' },
      instruction: BROKEN_LINKS,
    },
  },
  {
    id: 'style-guide',
    name: 'Enforce the style guide',
    description:
      'Runs for each push to the docs repository, and brings the pages it changed in line with the style guide.',
    automation: {
      name: 'Enforce the style guide',
      trigger: { type: 'docs-push' },
      instruction: STYLE_GUIDE,
    },
  },
];
