// read_change past the host's listing (docs/code-context.mdx): a change of 372 files resolved as
// the worker resolves it (300 kept) is listed in full from the repository between its base and
// head; any file of it can be read, with its real size; the limit that cut the list is named;
// binary files (added, modified, renamed) are described, never sent to read_file. Real git: the
// change comes from the local host and the files from the worker's git code reader.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { type AgentChange, RESOLVED_CHANGE_FILES } from '../../src/agent/change.ts';
import { runTool } from '../../src/agent/tools/index.ts';
import { readChange } from '../../src/agent/tools/read_change.ts';
import type { ToolContext } from '../../src/agent/tools/tool.ts';
import { DEFAULT_LIMITS, ToolError } from '../../src/agent/types.ts';
import { Workspace } from '../../src/agent/workspace.ts';
import { GitCodeReader } from '../../src/git/code-reader.ts';
import { createHost } from '../../src/git/hosts/index.ts';
import { gitCodeContext } from '../../src/pipeline/code-context.ts';
import { createGitRepository, type GitRepository } from '../doubles/git-repository.ts';
import { temporaryDirectory } from '../helpers/temp.ts';

const png = (seed: number, size: number) => {
  const bytes = Buffer.alloc(size);
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00]);
  for (let i = 10; i < size; i++) bytes[i] = (i * 31 + seed) % 256;
  return bytes;
};

let repo: GitRepository;
let reader: GitCodeReader;
let change: AgentChange;
let context: ToolContext;
let base: string;
let head: string;

const read = (input: Record<string, unknown>, changes = [change]) =>
  runTool(readChange, input, { ...context, changes });
async function refusal(input: Record<string, unknown>, changes = [change]): Promise<string> {
  try {
    assert.fail(`should fail, got: ${await read(input, changes)}`);
  } catch (error) {
    assert.ok(error instanceof ToolError, String(error));
    return error.message;
  }
}
/** The diff from its first `@@`, as git prints it. */
const gitDiffOf = (file: string) => {
  const out = execFileSync('git', ['diff', base, head, '--', file], { cwd: repo.dir, encoding: 'utf8' });
  return out.slice(out.indexOf('@@'));
};

before(async () => {
  repo = createGitRepository({
    'README.md': '# API\n',
    'a-big.txt': 'start\n',
    'a-icon.png': png(1, 2_000),
    'a-old.png': png(2, 1_500),
  });
  base = repo.head('main');
  const files: Record<string, string | Buffer | null> = {
    // 120,000 characters of diff: over docwright's 100,000 per file kept at resolution.
    'a-big.txt': Array.from({ length: 6_000 }, (_, i) => `line ${i} of the big file\n`).join(''),
    'a-icon.png': png(3, 4_096),
    'a-logo.png': png(4, 3_000),
    'a-old.png': null,
    'a-new.png': png(2, 1_500),
  };
  for (let i = 0; i < 368; i++) files[`f/${String(i).padStart(3, '0')}.txt`] = `content ${i}\n`;
  repo.commit('wide', files, { from: 'main', message: 'A wide change' });
  head = repo.head('wide');
  const host = createHost({ host: 'local', repository: pathToFileURL(repo.dir).href, apiUrl: null }, {});
  const resolved = await host.getChange(
    { kind: 'range', base, head },
    { limits: { maxFiles: RESOLVED_CHANGE_FILES } },
  );
  change = { repository: 'api', ...resolved };
  reader = new GitCodeReader({ cwd: repo.dir, commit: head });
  const root = temporaryDirectory('docwright-read-change-');
  const workspace = await Workspace.open(root, { docsDir: '.', writable: ['**/*.mdx'] }, DEFAULT_LIMITS);
  workspace.code = {
    reader: gitCodeContext({
      readers: new Map([['api', reader]]),
      maxFileBytes: DEFAULT_LIMITS.maxFileBytes,
    }),
    repositories: ['api'],
  };
  context = { root, signal: new AbortController().signal, workspace, changes: [change] };
});
after(() => {
  reader?.close();
  repo?.close();
});

describe('read_change past the listing', () => {
  test('the resolved change keeps 300 of its 372 files (a rename is one)', () => {
    assert.equal(change.files.length, 300);
    assert.equal(change.totalFiles, 372);
  });

  test("the overview names docwright's limit and lists the rest from the repository", async () => {
    const overview = await read({});
    assert.match(overview, /Files \(372\):/);
    assert.match(overview, /docwright keeps the first 300 files of a change from the host's listing/);
    assert.doesNotMatch(overview, /not listed by the host/);
    assert.match(overview, /the 72 files below come from the repository/);
    assert.match(overview, /^A f\/367\.txt$/m, 'the last file of the change is listed');
  });

  test("a host's shorter listing is named as the host's", async () => {
    const short = { ...change, files: change.files.slice(0, 100) };
    assert.match(await read({}, [short]), /the host's listing stopped after 100 files \(its own limit\)/);
  });

  test('a file past the listing is read from the repository; a path the change does not touch is refused', async () => {
    assert.ok(!change.files.some((f) => f.path === 'f/360.txt'), 'not among the listed files');
    const diff = await read({ path: 'f/360.txt' });
    assert.match(diff, /^A f\/360\.txt .*diff computed from the repository/m);
    assert.match(diff, /\+content 360/);
    const refused = await refusal({ path: 'f/999.txt' });
    assert.match(refused, /"f\/999\.txt" is not among the files of change 0/);
    assert.match(refused, /the repository shows no change to this path/);
  });

  test('a diff cut at resolution is read whole from the repository: the real size is said', async () => {
    const big = change.files.find((f) => f.path === 'a-big.txt')!;
    assert.ok(big.truncated, 'docwright kept 100,000 characters of it');
    const real = gitDiffOf('a-big.txt').length;
    assert.ok(real > 100_000, `${real}`);
    const answer = await read({ path: 'a-big.txt' });
    const cut = /The diff was cut after ([\d,]+) of ([\d,]+) characters: read_change shows 30,000/.exec(
      answer,
    );
    assert.ok(cut, answer.slice(-400));
    assert.equal(Number(cut[2]!.replaceAll(',', '')), real, 'the whole diff, not the kept 100,000');
    assert.ok(Number(cut[1]!.replaceAll(',', '')) <= 30_000);
  });

  test('binary files: what is known (kind, status, paths, sizes), never a read_file hint', async () => {
    const added = await read({ path: 'a-logo.png' });
    assert.match(added, /^A a-logo\.png \[binary\]$/m, 'no line counts: a binary file has none');
    assert.match(added, /A binary file: image \(\.png\), added, 2\.9 KiB at the change's head\./);
    const modified = await read({ path: 'a-icon.png' });
    assert.match(modified, /image \(\.png\), modified, 2,000 bytes before, 4 KiB at the change's head/);
    const renamed = await read({ path: 'a-new.png' });
    assert.match(renamed, /^R a-new\.png \(from a-old\.png\).*\[binary\]$/m);
    assert.match(renamed, /image \(\.png\), renamed, from a-old\.png/);
    for (const answer of [added, modified, renamed]) {
      assert.doesNotMatch(answer, /read_file "/);
      assert.match(answer, /That is all that can be known of it here/);
    }
  });

  test('a pure binary rename is marked [binary] in the list', async () => {
    const overview = await read({});
    assert.match(overview, /^R a-new\.png \(from a-old\.png\).*\[binary\]$/m);
    assert.match(overview, /^A a-logo\.png.*\[binary\]$/m);
    // A host that shows a rename without a diff and does not say binary (GitHub, Gitea): the repository tells.
    const unmarked = {
      ...change,
      files: change.files.map((f) =>
        f.path === 'a-new.png' ? { ...f, binary: false, additions: 0, deletions: 0 } : f,
      ),
    };
    const listed = await read({}, [unmarked]);
    assert.match(listed, /^R a-new\.png \(from a-old\.png\) \[binary\]$/m);
    assert.match(listed, /^M a-big\.txt \(\+6000 -1\)$/m, 'text files keep their counts');
  });
});
