// The product's reference documentation (docs/) as a Mintlify site that docwright's own validator
// accepts, whose links between pages resolve, and that keeps up with the code: every environment
// variable src/ reads is on the configuration page, every command and flag of the CLI on the CLI
// page, every error code on the errors page; and the npm package does not ship it.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';
import { createProcessor } from '@mdx-js/mdx';
import { parse as parseYaml } from 'yaml';
import { detectSite } from '../../src/agent/site/detect.ts';
import { validateChanges } from '../../src/agent/validate.ts';
import { errorStatus } from '../../src/errors.ts';
import { temporaryDirectory } from '../helpers/temp.ts';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const DOCS = 'docs';
const read = (root: string, file: string) => readFileSync(path.join(root, file), 'utf8');

/** Every file under `dir` of `root`, repository-relative, sorted. */
function filesUnder(root: string, dir: string): string[] {
  return readdirSync(path.join(root, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'))
    .sort();
}

// ------------------------------------------------------------------------------------------------
// The site: the agent's validator, frontmatter, links

/** A node of the MDX syntax tree, as far as this file looks at it. */
interface MdNode {
  type: string;
  url?: string;
  value?: unknown;
  depth?: number;
  name?: string | null;
  attributes?: { type: string; name?: string; value?: unknown }[];
  children?: MdNode[];
}

const mdx = createProcessor({ format: 'mdx' });

/** The page's text with its frontmatter blanked out (as the validator compiles it). */
function body(text: string): { frontmatter: unknown; body: string } {
  const match = /^---\n([\s\S]*?)\n---\n/.exec(text);
  if (!match) return { frontmatter: undefined, body: text };
  return {
    frontmatter: parseYaml(match[1]!),
    body: '\n'.repeat(match[0].split('\n').length - 1) + text.slice(match[0].length),
  };
}

const textOf = (node: MdNode): string =>
  typeof node.value === 'string' ? node.value : (node.children ?? []).map(textOf).join('');

/** Heading anchors as Mintlify (and GitHub) make them: lower case, punctuation dropped, spaces to hyphens. */
function anchors(headings: string[]): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const heading of headings) {
    const slug = heading
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    out.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return out;
}

/** A page's links (Markdown links and images, and `href`/`src` of components) and heading anchors. */
function outline(text: string): { links: string[]; anchors: Set<string> } {
  const links: string[] = [];
  const headings: string[] = [];
  const visit = (node: MdNode) => {
    if ((node.type === 'link' || node.type === 'image' || node.type === 'definition') && node.url)
      links.push(node.url);
    if (node.type === 'heading') headings.push(textOf(node));
    for (const attribute of node.attributes ?? []) {
      if ((attribute.name === 'href' || attribute.name === 'src') && typeof attribute.value === 'string')
        links.push(attribute.value);
    }
    for (const child of node.children ?? []) visit(child);
  };
  try {
    visit(mdx.parse(body(text).body) as unknown as MdNode);
  } catch {
    // MDX that does not parse has no links to follow; the validator reports it.
  }
  return { links, anchors: anchors(headings) };
}

/** What is wrong with the docs site under `root`/docs; empty when nothing is. */
async function siteProblems(root: string): Promise<string[]> {
  const files = filesUnder(root, DOCS);
  // The site before: none (an empty repository). Validating every file against it is how one run
  // that created the whole site would be judged: every page must then be in the navigation too.
  const before = await detectSite(temporaryDirectory('docwright-no-site-'), DOCS);
  const problems = await validateChanges(root, files, before);
  const site = await detectSite(root, DOCS);
  if (site.kind !== 'mintlify' || site.configFile !== `${DOCS}/docs.json`) {
    problems.push(`${DOCS}/docs.json is not read as a Mintlify site (${site.kind}, ${site.configFile})`);
  }
  if (site.configError) problems.push(`${site.configFile}: ${site.configError}`);
  const pages = files.filter((f) => /\.mdx?$/.test(f));
  const outlines = new Map(pages.map((page) => [page, outline(read(root, page))]));
  for (const page of pages) {
    const { frontmatter } = body(read(root, page));
    const fields = (frontmatter ?? {}) as Record<string, unknown>;
    for (const field of ['title', 'description']) {
      if (typeof fields[field] !== 'string' || fields[field] === '')
        problems.push(`${page}: no frontmatter ${field}`);
    }
    for (const link of outlines.get(page)!.links) {
      if (/^(https?|mailto):/.test(link)) continue;
      const [target = '', anchor] = link.split('#');
      const base =
        target === ''
          ? page
          : path.posix.join(target.startsWith('/') ? DOCS : path.posix.dirname(page), target);
      if (target !== '' && path.posix.extname(target) !== '') {
        if (!existsSync(path.join(root, base))) problems.push(`${page}: the link ${link} names no file`);
        continue;
      }
      const found = target === '' ? page : [`${base}.mdx`, `${base}.md`].find((f) => outlines.has(f));
      if (!found) problems.push(`${page}: the link ${link} names no page`);
      else if (anchor && !outlines.get(found)!.anchors.has(anchor))
        problems.push(`${page}: the link ${link} names no heading of ${found}`);
    }
  }
  return problems;
}

/** A copy of the docs site to break, in a temporary directory removed when the test process exits. */
function copyOfSite(): string {
  const root = temporaryDirectory('docwright-docs-site-');
  cpSync(path.join(ROOT, DOCS), path.join(root, DOCS), { recursive: true });
  return root;
}

describe('the docs site', () => {
  test("passes docwright's own validator, has a title and description on every page, and every link between pages resolves", async () => {
    assert.deepEqual(await siteProblems(ROOT), []);
  });

  test('a navigated page that is missing, a page left out of the navigation, and a dead link or anchor are each reported', async () => {
    const root = copyOfSite();
    rmSync(path.join(root, DOCS, 'webhooks.mdx'));
    writeFileSync(
      path.join(root, DOCS, 'orphan.mdx'),
      '---\ntitle: "Orphan"\ndescription: "Not in the navigation."\n---\n\nSee [nothing](/no-such-page) and [the agent](/agent#no-such-heading).\n',
    );
    const problems = (await siteProblems(root)).join('\n');
    assert.match(problems, /navigation names "webhooks" but no page/);
    assert.match(problems, /docs\/orphan\.mdx: this new page is not in the navigation/);
    assert.match(problems, /the link \/no-such-page names no page/);
    assert.match(problems, /the link \/agent#no-such-heading names no heading/);
    assert.match(problems, /docs\/index\.mdx: the link \/webhooks names no page/);
  });

  test('a page whose MDX does not compile is reported', async () => {
    const root = copyOfSite();
    writeFileSync(path.join(root, DOCS, 'cli.mdx'), `${read(root, `${DOCS}/cli.mdx`)}\n<Note>never closed\n`);
    assert.match((await siteProblems(root)).join('\n'), /docs\/cli\.mdx:\d+:\d+: MDX does not compile/);
  });

  test('no page tells to install the unpublished package from the registry (issue 35)', () => {
    // `npm install -g docwright` answers 404 until the package is published: a page says what
    // the README says (npm pack, then install the file), naming the registry only as "once published".
    const pages = [...filesUnder(ROOT, DOCS).filter((f) => f.endsWith('.mdx')), 'README.md'];
    const told = pages.flatMap((file) =>
      read(ROOT, file)
        .split('\n')
        .filter((line) => /npm install -g docwright(?![@\w./-])/.test(line) && !/published/.test(line))
        .map((line) => `${file}: ${line.trim()}`),
    );
    assert.deepEqual(told, []);
  });

  test('the npm package does not ship it', async () => {
    const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT });
    const files = (JSON.parse(stdout) as [{ files: { path: string }[] }])[0].files.map((f) => f.path);
    assert.ok(files.includes('package.json'), 'the dry run listed the package');
    assert.deepEqual(
      files.filter((f) => f.startsWith(`${DOCS}/`)),
      [],
    );
  });
});

// ------------------------------------------------------------------------------------------------
// The configuration page: every environment variable src/ reads

/**
 * The environment variables src/ reads: the keys of the configuration schema, every `env.NAME`,
 * `process.env.NAME` and `env['NAME']`, every `DOCWRIGHT_…` name anywhere in the sources, and
 * `INPUT_<NAME>` for names built from a template (`env[\`INPUT_${…}\`]`).
 */
function environmentVariablesReadBy(root: string): Set<string> {
  const names = new Set<string>();
  for (const file of filesUnder(root, 'src').filter((f) => f.endsWith('.ts'))) {
    const text = read(root, file);
    const patterns = [
      /\benv\??\.([A-Z][A-Z0-9_]*)\b/g,
      /\benv\[['"]([A-Z][A-Z0-9_]*)['"]\]/g,
      /\b(DOCWRIGHT_[A-Z0-9_]*[A-Z0-9])\b/g,
    ];
    for (const pattern of patterns) for (const match of text.matchAll(pattern)) names.add(match[1]!);
    for (const match of text.matchAll(/\benv\[`([A-Z][A-Z0-9_]*)\$\{/g)) names.add(`${match[1]}<NAME>`);
  }
  const config = read(root, 'src/config.ts');
  const schema = /const envSchema = z\.object\(\{\n([\s\S]*?)\n\}\);/.exec(config)?.[1] ?? '';
  for (const match of schema.matchAll(/^ {2}([A-Z][A-Z0-9_]*):/gm)) names.add(match[1]!);
  return names;
}

const undocumented = (names: Iterable<string>, page: string) =>
  [...names].filter((name) => !page.includes(`\`${name}\``)).sort();

describe('the configuration page', () => {
  const names = environmentVariablesReadBy(ROOT);
  const page = read(ROOT, `${DOCS}/configuration.mdx`);

  test('names every environment variable src/ reads', () => {
    for (const known of [
      'DATABASE_URL',
      'DOCWRIGHT_MODEL',
      'ANTHROPIC_BASE_URL',
      'XDG_DATA_HOME',
      'DOCWRIGHT_AGENT_MAX_STEPS',
      'INPUT_<NAME>',
    ])
      assert.ok(names.has(known), `${known} is found in src/ (the scan works)`);
    assert.ok(names.size > 40, `${names.size} variables found`);
    assert.deepEqual(undocumented(names, page), []);
  });

  test('a variable missing from the page is reported', () => {
    assert.deepEqual(undocumented(names, page.replaceAll('`DOCWRIGHT_MIRROR_MAX_MB`', 'the mirror budget')), [
      'DOCWRIGHT_MIRROR_MAX_MB',
    ]);
    assert.deepEqual(undocumented(new Set([...names, 'DOCWRIGHT_SOMETHING_NEW']), page), [
      'DOCWRIGHT_SOMETHING_NEW',
    ]);
  });
});

// ------------------------------------------------------------------------------------------------
// The CLI page: every command and flag, as src/cli/main.ts defines them

interface CliCommand {
  /** `docwright project create`. */
  name: string;
  flags: string[];
}

/**
 * Run in a child process: replaces commander's `parseAsync` before src/cli/main.ts builds its
 * program, so that instead of running a command the real program prints every command without
 * subcommands, with its visible flags.
 */
const LIST_COMMANDS = `
import { Command } from 'commander';
Command.prototype.parseAsync = async function () {
  const leaves = [];
  const walk = (command, words) => {
    const subcommands = command.commands.filter((c) => c.name() !== 'help');
    if (subcommands.length === 0)
      leaves.push({ name: words.join(' '), flags: command.options.filter((o) => !o.hidden).map((o) => o.long) });
    for (const sub of subcommands) walk(sub, [...words, sub.name()]);
  };
  walk(this, ['docwright']);
  process.stdout.write(JSON.stringify(leaves));
  return this;
};
await import('./src/cli/main.ts');
process.exit(0);
`;

/** Every command of the CLI that has no subcommands, with its flags, as src/cli/main.ts defines them. */
async function cliCommands(): Promise<CliCommand[]> {
  const { stdout } = await run(process.execPath, ['--input-type=module', '--eval', LIST_COMMANDS], {
    cwd: ROOT,
  });
  return JSON.parse(stdout) as CliCommand[];
}

/** The page's headings (outside code blocks) with the text under each, up to the next of its level or above. */
function sections(page: string): { heading: string; text: string }[] {
  const lines = page.split('\n');
  const headings: { at: number; depth: number; heading: string }[] = [];
  let fenced = false;
  lines.forEach((line, at) => {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const match = fenced ? null : /^(#{1,6})\s+(.*)$/.exec(line);
    if (match) headings.push({ at, depth: match[1]!.length, heading: match[2]!.replace(/`/g, '') });
  });
  return headings.map((h, i) => {
    const end = headings.slice(i + 1).find((later) => later.depth <= h.depth)?.at ?? lines.length;
    return { heading: h.heading, text: lines.slice(h.at, end).join('\n') };
  });
}

/** What the CLI page leaves out of `commands`: a command without a heading, a flag not in its section. */
function cliPageGaps(commands: CliCommand[], page: string): string[] {
  const all = sections(page);
  const gaps: string[] = [];
  for (const command of commands) {
    // A heading names one command, or several: "docwright project create and docwright project update".
    const section = all.find((s) => s.heading.split(/, | and /).some((part) => part.trim() === command.name));
    if (!section) {
      gaps.push(`${command.name}: no heading`);
      continue;
    }
    for (const flag of command.flags) {
      if (!new RegExp(`\`${flag}(?=[\` <])`).test(section.text)) gaps.push(`${command.name}: ${flag}`);
    }
  }
  return gaps;
}

describe('the CLI page', () => {
  const page = read(ROOT, `${DOCS}/cli.mdx`);

  test('has a section for every command, naming each of its flags', async () => {
    const commands = await cliCommands();
    const names = commands.map((c) => c.name);
    for (const known of [
      'docwright serve',
      'docwright project create',
      'docwright job watch',
      'docwright webhook resend',
      'docwright mcp',
    ])
      assert.ok(names.includes(known), `${known} is found in the help (the crawl works)`);
    assert.ok(
      commands.find((c) => c.name === 'docwright project create')!.flags.includes('--monthly-token-budget'),
    );
    assert.deepEqual(cliPageGaps(commands, page), []);
  });

  test('a command or flag missing from the page is reported', () => {
    const commands = [
      { name: 'docwright job watch', flags: ['--json'] },
      { name: 'docwright job create', flags: ['--prompt', '--not-documented'] },
      { name: 'docwright job', flags: [] },
      { name: 'docwright frobnicate', flags: [] },
    ];
    assert.deepEqual(cliPageGaps(commands, page), [
      'docwright job create: --not-documented',
      'docwright job: no heading',
      'docwright frobnicate: no heading',
    ]);
  });
});

// ------------------------------------------------------------------------------------------------
// The errors page: every code a request or a job can fail with

describe('the errors page', () => {
  test('names every problem code and every job error code in src/', () => {
    const page = read(ROOT, `${DOCS}/api/errors.mdx`);
    const union = (file: string, type: string) => {
      const block = new RegExp(`export type ${type} =([^;]*);`).exec(read(ROOT, file))?.[1] ?? '';
      return [...block.matchAll(/'([a-z-]+)'/g)].map((m) => m[1]!);
    };
    // The worker and the run queue (the sweeper's worker-lost and time limits) end runs with codes.
    const worker = [...filesUnder(ROOT, 'src/worker'), ...filesUnder(ROOT, 'src/jobs/queue')].flatMap(
      (file) => [...read(ROOT, file).matchAll(/code: '([a-z-]+)'/g)].map((m) => m[1]!),
    );
    const jobCodes = [
      // `cancelled` never reaches a job: a cancelled run writes nothing, and its job is archived.
      ...union('src/agent/types.ts', 'AgentFailureCode').filter((code) => code !== 'cancelled'),
      ...union('src/git/hosts/host.ts', 'HostErrorCode'),
      ...worker,
    ];
    assert.ok(
      jobCodes.includes('validation-failed') &&
        jobCodes.includes('push-rejected') &&
        jobCodes.includes('worker-lost'),
    );
    assert.deepEqual(undocumented([...Object.keys(errorStatus), ...jobCodes], page), []);
  });
});
