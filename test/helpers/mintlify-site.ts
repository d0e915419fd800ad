import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * A Mintlify documentation site generated for tests, in the shape of a real one, so that the
 * repository's tests need nothing beside it: tabs of groups with a nested group, pages that use
 * Mintlify's components (callouts, cards, steps, tabs, code groups, accordions, fields, frames,
 * badges), a snippet that exports a React component and pages that import it, an API reference,
 * a changelog, images, a page outside the navigation and `.mintlify/AGENTS.md` guidance; more
 * than a hundred pages, so that a site map has to be bounded.
 */

/** The quickstart's first sentence (end-to-end tests edit it). */
export const QUICKSTART_WELCOME =
  "After you complete this guide, you'll have a live documentation site ready to customize and update.";

/** Generated settings pages and API endpoints: enough pages for a site map that must be cut. */
const SETTINGS = 60;
const ENDPOINTS = 40;

/** The HTTP method of each endpoint's verb. */
const METHODS: Record<string, string> = {
  list: 'GET',
  get: 'GET',
  create: 'POST',
  update: 'PATCH',
  delete: 'DELETE',
};

type NavEntry = string | { group: string; pages: NavEntry[] };

const settingsPages = Array.from({ length: SETTINGS }, (_, i) => `settings/option-${i + 1}`);
const endpointPages = Array.from(
  { length: ENDPOINTS },
  (_, i) => `api-reference/endpoint/${endpointName(i)}`,
);

/** The navigation of docs.json: three tabs. */
const NAVIGATION: { tab: string; groups: { group: string; pages: NavEntry[] }[] }[] = [
  {
    tab: 'Documentation',
    groups: [
      { group: 'Get started', pages: ['index', 'quickstart', 'installation'] },
      {
        group: 'Editor',
        pages: [
          'editor/agent',
          'editor/pages',
          { group: 'Publishing', pages: ['editor/publish', 'editor/preview'] },
        ],
      },
      {
        group: 'Components',
        pages: [
          'components/accordions',
          'components/callouts',
          'components/cards',
          'components/code-groups',
          'components/fields',
          'components/frames',
          'components/steps',
          'components/tabs',
        ],
      },
      { group: 'Best practices', pages: ['guides/writing', 'guides/navigation', 'guides/style'] },
      { group: 'Settings', pages: settingsPages },
    ],
  },
  {
    tab: 'API reference',
    groups: [
      { group: 'Overview', pages: ['api-reference/introduction'] },
      { group: 'Endpoints', pages: endpointPages },
    ],
  },
  { tab: 'Changelog', groups: [{ group: 'Changelog', pages: ['changelog'] }] },
];

/** How many pages the navigation names. */
export const MINTLIFY_SITE_NAV_PAGES = countPages(
  NAVIGATION.flatMap((t) => t.groups.flatMap((g) => g.pages)),
);

function countPages(entries: NavEntry[]): number {
  return entries.reduce((n, e) => n + (typeof e === 'string' ? 1 : countPages(e.pages)), 0);
}

function endpointName(i: number): string {
  const verbs = Object.keys(METHODS);
  const things = ['projects', 'pages', 'deployments', 'members', 'keys', 'domains', 'redirects', 'assets'];
  return `${verbs[i % verbs.length]}-${things[Math.floor(i / verbs.length) % things.length]}`;
}

const frontmatter = (title: string, description: string) =>
  `---\ntitle: "${title}"\ndescription: "${description}"\n---\n\n`;

/** The hand-written pages, by path. */
function writtenPages(): Record<string, string> {
  return {
    ...startPages(),
    ...editorPages(),
    ...componentPages(),
    ...layoutPages(),
    ...guidePages(),
    'api-reference/introduction.mdx': `${frontmatter('API introduction', 'Authenticate and call the API.')}All requests take a bearer token.

<ParamField header="Authorization" type="string" required>
  \`Bearer <token>\`
</ParamField>
`,
    'changelog.mdx': `${frontmatter('Changelog', 'What changed, release by release.')}<Update label="2026-11-01" description="v2.3">
  Pages can be previewed before they are published.
</Update>

<Update label="2026-10-01" description="v2.2">
  The editor saves drafts.
</Update>
`,
    'internal/drafting.mdx': `${frontmatter('Drafting notes', 'Notes kept out of the navigation.')}This page is not listed in \`docs.json\`.
`,
  };
}

/** The Get started group's pages. */
function startPages(): Record<string, string> {
  return {
    'index.mdx': `${frontmatter('Introduction', 'Meet the documentation platform.')}<img className="block dark:hidden" src="/images/hero-light.svg" alt="Hero" />

Acme turns Markdown into a documentation site. Each page is an MDX file, and \`docs.json\` arranges them.

<CardGroup cols={2}>
  <Card title="Quickstart" icon="rocket" href="/quickstart">
    Deploy your site in minutes.
  </Card>
  <Card title="Components" icon="shapes" href="/components/callouts">
    Callouts, steps, tabs and more.
  </Card>
</CardGroup>
`,
    'quickstart.mdx': `${frontmatter('Quickstart', 'Deploy your documentation site and make your first change.')}${QUICKSTART_WELCOME}

## Deploy your site

<Steps>
  <Step title="Create an account">
    Sign up and connect your repository.
  </Step>
  <Step title="Make a change">
    Edit \`index.mdx\`, then commit. The site rebuilds on every push.
  </Step>
</Steps>

<Tip>
  Install the [CLI](/installation) to preview changes locally.
</Tip>

## Next steps

Add pages to \`docs.json\` so that readers find them in the navigation.
`,
    'installation.mdx': `${frontmatter('Install the CLI', 'Preview your site on your own machine.')}<CodeGroup>

\`\`\`bash npm
npm i -g acme
\`\`\`

\`\`\`bash pnpm
pnpm add -g acme
\`\`\`

</CodeGroup>

Run \`acme dev\` in the folder that holds \`docs.json\`.
`,
  };
}

/** The Editor group's pages; the agent's page imports the snippet. */
function editorPages(): Record<string, string> {
  return {
    'editor/agent.mdx': `${frontmatter('Agent', 'Let the agent draft documentation changes.')}The agent reads your pages and \`docs.json\`, then proposes a change as a pull request.

import { Counter } from "/snippets/counter.mdx";

<Counter />

<Note>
  The agent never publishes by itself: a person merges its pull request.
</Note>
`,
    'editor/pages.mdx': `${frontmatter('Pages', 'Create, rename and move pages.')}A new page appears in the navigation once \`docs.json\` names it.

<Warning>
  Moving a page changes its URL: add a redirect.
</Warning>
`,
    'editor/publish.mdx': `${frontmatter('Publish', 'Publish your changes.')}Publishing merges your branch. <Badge>Admins</Badge> may publish without review.
`,
    'editor/preview.mdx': `${frontmatter('Preview', 'Preview a branch before it is published.')}Each branch gets a preview URL built from its \`docs.json\`.
`,
  };
}

/** The component pages of callouts, cards, code and fields. */
function componentPages(): Record<string, string> {
  return {
    'components/accordions.mdx': `${frontmatter('Accordions', 'Hide details until a reader asks for them.')}<AccordionGroup>
  <Accordion title="Can I nest accordions?">
    No: keep one level.
  </Accordion>
  <Accordion title="Do they print?" icon="print">
    Open ones do.
  </Accordion>
</AccordionGroup>
`,
    'components/callouts.mdx': `${frontmatter('Callouts', 'Draw attention to what matters.')}<Note>A note.</Note>

<Info>Some information.</Info>

<Tip>A tip.</Tip>

<Warning>A warning.</Warning>

<Check>Done.</Check>
`,
    'components/cards.mdx': `${frontmatter('Cards', 'Link to other pages with cards.')}<Card title="Quickstart" icon="rocket" href="/quickstart" horizontal>
  Start here.
</Card>
`,
    'components/code-groups.mdx': `${frontmatter('Code groups', 'Show one example in several languages.')}<CodeGroup>

\`\`\`javascript index.js
console.log("hello");
\`\`\`

\`\`\`python main.py
print("hello")
\`\`\`

</CodeGroup>
`,
    'components/fields.mdx': `${frontmatter('Fields', 'Document parameters and responses.')}<ResponseField name="id" type="string" required>
  The page's id.
</ResponseField>

<Expandable title="properties">
  <ResponseField name="title" type="string">Its title.</ResponseField>
</Expandable>
`,
  };
}

/** The component pages of layout and media. */
function layoutPages(): Record<string, string> {
  return {
    'components/frames.mdx': `${frontmatter('Frames', 'Frame images and videos.')}<Frame caption="The editor">
  <img src="/images/editor.svg" alt="The editor" />
</Frame>

![A diagram](/images/diagram.svg)
`,
    'components/steps.mdx': `${frontmatter('Steps', 'Walk readers through a procedure.')}<Steps>
  <Step title="First">Do this.</Step>
  <Step title="Second">Then this.</Step>
</Steps>
`,
    'components/tabs.mdx': `${frontmatter('Tabs', 'Show alternatives side by side.')}<Tabs>
  <Tab title="macOS">Use Homebrew.</Tab>
  <Tab title="Linux">Use your package manager.</Tab>
</Tabs>

| Platform | Command |
| --- | --- |
| macOS | \`brew install acme\` |
| Linux | \`apt install acme\` |
`,
  };
}

/** The Best practices group's pages. */
function guidePages(): Record<string, string> {
  return {
    'guides/writing.mdx': `${frontmatter('Writing', 'Write pages readers can scan.')}Lead with what the reader wants to do. Register every new page in \`docs.json\`.
`,
    'guides/navigation.mdx': `${frontmatter('Navigation', 'Arrange pages with docs.json.')}\`docs.json\` holds tabs, groups and pages:

\`\`\`json docs.json
{ "navigation": { "groups": [{ "group": "Get started", "pages": ["index"] }] } }
\`\`\`
`,
    'guides/style.mdx': `${frontmatter('Style', 'Keep one voice across pages.')}Use sentence case in headings, and name files in \`docs.json\` without their extension.
`,
  };
}

/** The generated pages: settings and endpoints, each a realistic page of its own. */
function generatedPages(): Record<string, string> {
  const files: Record<string, string> = {};
  settingsPages.forEach((page, i) => {
    files[`${page}.mdx`] =
      `${frontmatter(`Option ${i + 1}`, `What option ${i + 1} changes.`)}Set \`option_${i + 1}\` in \`acme.json\` to change how the site builds.

<ParamField path="option_${i + 1}" type="boolean" default="false">
  Turns the behaviour on.
</ParamField>
`;
  });
  endpointPages.forEach((page, i) => {
    const [verb, thing] = endpointName(i).split('-') as [string, string];
    files[`${page}.mdx`] =
      `---\ntitle: "${verb} ${thing}"\napi: "${METHODS[verb]} https://api.acme.dev/v1/${thing}"\n---\n\n<ResponseField name="${thing}" type="object[]">\n  The ${thing}.\n</ResponseField>\n`;
  });
  return files;
}

const svg = (label: string) =>
  `<svg xmlns="http://www.w3.org/2000/svg" width="120" height="40"><text x="4" y="24">${label}</text></svg>\n`;

/** Every file of the site, by path (for a hosted repository's first commit). */
export function mintlifySiteFiles(): Record<string, string> {
  const docsJson = {
    $schema: 'https://mintlify.com/docs.json',
    theme: 'mint',
    name: 'Acme',
    colors: { primary: '#16A34A', light: '#07C983', dark: '#15803D' },
    favicon: '/favicon.svg',
    navigation: { tabs: NAVIGATION },
    footer: { socials: { github: 'https://github.com/acme' } },
  };
  return {
    'docs.json': `${JSON.stringify(docsJson, null, 2)}\n`,
    ...writtenPages(),
    ...generatedPages(),
    'snippets/counter.mdx': `export const Counter = () => {
  const [count, setCount] = useState(0);

  return (
    <button onClick={() => setCount(count + 1)} className="rounded-xl border px-4">
      Clicked {count} times
    </button>
  );
};
`,
    '.mintlify/AGENTS.md':
      '# Documentation agent instructions\n\nWhen you create a PR to update docs, only update English language files.\n',
    'favicon.svg': svg('A'),
    'images/hero-light.svg': svg('Hero'),
    'images/editor.svg': svg('Editor'),
    'images/diagram.svg': svg('Diagram'),
  };
}

/** Writes the site into `dir` (which may exist). */
export function writeMintlifySite(dir: string): void {
  for (const [file, content] of Object.entries(mintlifySiteFiles())) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), content);
  }
}
