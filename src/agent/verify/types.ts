/**
 * The contract of verification (docs/verification.mdx, SPEC §19): checks read two states of the
 * docs tree — the checkout as the run left it, and the base (the same checkout with the run's
 * changes undone) — and report findings. A finding of the run's tree that the same check also
 * finds in the base tree is the base's, not the run's: it never blocks.
 */

/** How much a finding weighs: `error` blocks the run; the others are shown once and reported. */
export type FindingLevel = 'error' | 'warning' | 'suggestion';

/** One problem a check found. */
export interface Finding {
  /** Repository-relative POSIX path of the file it is in. */
  path: string;
  /** 1-based line, or null when it concerns the whole file. */
  line: number | null;
  /** What is wrong and how to fix it: one line a model can act on and a person can read. */
  message: string;
  level: FindingLevel;
  /** What found it: `pages`, `navigation`, `links`, `snippets`, `openapi`, `redirects`, a Vale rule (`Microsoft.Contractions`), `cspell`, or a command line. */
  rule: string;
}

/** One state of the repository, read-only: what checks look at. */
export interface DocsTree {
  /** Absolute path of a directory holding exactly this state (commands run there), or null when it exists only as an overlay. */
  readonly dir: string | null;
  /** A file's text (UTF-8), or null when there is no regular file at the repository-relative path (symbolic links are not followed). */
  readText(path: string): Promise<string | null>;
  /** Whether a regular file or a directory exists at the repository-relative path. */
  exists(path: string): Promise<'file' | 'dir' | null>;
  /** Repository-relative paths of the files under `dir` (default `.`), sorted, as git would list them (no `.git`, nothing ignored). */
  listFiles(dir?: string): Promise<string[]>;
}

/** What the run changed, which decides what is checked. Paths are repository-relative. */
export interface RunChanges {
  /** Files the run created or modified that exist now (move targets included). */
  changed: string[];
  /** Files the run deleted (move sources included). */
  deleted: string[];
  /** Renames the run made, as the model asked for them. */
  moved: { from: string; to: string }[];
}

/** What a check is given. */
export interface CheckInput {
  /** The tree to check: the run's, or the base. */
  tree: DocsTree;
  /** Which of the two it is. */
  state: 'head' | 'base';
  /** The other state: the base for the head, the head for the base (line checks compare them). */
  other: DocsTree;
  /** The project's documentation folder, repository-relative (`.` = root). */
  docsDir: string;
  changes: RunChanges;
  signal: AbortSignal;
}

/** What one check found in one tree. */
export interface CheckOutcome {
  findings: Finding[];
  /** Why the check did not run (no configuration, a tool missing), or undefined when it ran. */
  skipped?: string;
  /** What it covered, for the pull request's Checks section: e.g. `{pages: 3, links: 41, anchors: 7}`. */
  counts?: Record<string, number>;
  /** Remarks for the transcript (e.g. Vale rule types that are not applied), listed once. */
  notes?: string[];
}

/** A check: built in, style, spelling, or a project's command. */
export interface Check {
  /** Shown in the report: `pages`, `links`, `style`, `spelling`, or the command line. */
  name: string;
  run(input: CheckInput): Promise<CheckOutcome>;
}

/** AgentJob `checks` (SPEC §19): one entry per check of the last verification. */
export interface CheckReport {
  name: string;
  status: 'passed' | 'fixed' | 'failed' | 'skipped';
  findings: (Pick<Finding, 'path' | 'line' | 'message' | 'level'> & { preexisting: boolean })[];
  /** What the check covered, for the pull request's Checks section (not kept on the job). */
  counts?: Record<string, number>;
  /** Why it did not run (not kept on the job: the transcript has it). */
  skipped?: string;
}
