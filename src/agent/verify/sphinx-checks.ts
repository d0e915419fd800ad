/**
 * Verification of Sphinx sites (SPEC §19), as far as their files say it without running Sphinx:
 * `navigation` — toctree entries name documents, every page the run touched is in a toctree (or
 * `:orphan:`), its markup is markup Sphinx accepts; `links` — `:doc:` and `:ref:` targets exist, and
 * the files `include`, `literalinclude`, `image` and `figure` name exist.
 */
import path from 'node:path';
import { joinRel, relativeTo } from '../site/repo-files.ts';
import { normalizeLabel, type SphinxDocument, type ToctreeEntry } from '../site/sphinx-markup.ts';
import { directivePath, docnameJoin, entryDocname, globDocnames } from '../site/sphinx-project.ts';
import { similarFiles } from '../suggestions.ts';
import { type SphinxIndex, sphinxIndex, sphinxScope } from './sphinx-index.ts';
import type { Check, CheckInput, CheckOutcome, Finding } from './types.ts';

const NOT_SPHINX = 'not a Sphinx site (no conf.py found)';

/** The Sphinx checks: `navigation` and `links`; both skip other sites. */
export function sphinxChecks(): Check[] {
  return [
    { name: 'navigation', run: (input) => runOnScope(input, navigationOf) },
    { name: 'links', run: (input) => runOnScope(input, linksOf) },
  ];
}

type DocumentCheck = (
  index: SphinxIndex,
  docname: string,
  doc: SphinxDocument,
  changed: boolean,
  input: CheckInput,
) => Promise<Finding[]>;

async function runOnScope(input: CheckInput, check: DocumentCheck): Promise<CheckOutcome> {
  const index = await sphinxIndex(input.tree, input.docsDir);
  if (!index) return { findings: [], skipped: NOT_SPHINX };
  const { changed, referring } = await sphinxScope(index, input.changes);
  const findings: Finding[] = [];
  if (check === navigationOf) findings.push(...(await rootFindings(index, input)));
  let references = 0;
  for (const docname of [...changed, ...referring]) {
    input.signal.throwIfAborted();
    const doc = await index.document(docname);
    if (!doc) continue;
    references += doc.references.length + doc.toctrees.reduce((n, t) => n + t.entries.length, 0);
    findings.push(...(await check(index, docname, doc, changed.includes(docname), input)));
  }
  const counts = { pages: changed.length + referring.length, references };
  if (index.project.conf.extensionsKnown) return { findings, counts };
  const notes = [
    `${index.project.confFile} does not assign "extensions" plainly: :ref: targets of other projects and section titles are accepted unchecked.`,
  ];
  return { findings, counts, notes };
}

const finding = (file: string, line: number | null, rule: string, message: string): Finding => ({
  path: file,
  line,
  message,
  level: 'error',
  rule,
});

/** "did you mean" among the site's documents, as a `/`-absolute docname. */
function suggestDocument(index: SphinxIndex, wanted: string): string | null {
  const best = similarFiles(wanted, [...index.project.docs.keys()], 1, Date.now() + 200)[0];
  return best === undefined ? null : `/${best}`;
}

/** A changed conf.py must still name an existing root document. */
async function rootFindings(index: SphinxIndex, input: CheckInput): Promise<Finding[]> {
  const { project } = index;
  if (!input.changes.changed.includes(project.confFile) || project.docs.has(project.conf.rootDoc)) return [];
  return [
    finding(
      project.confFile,
      null,
      'navigation',
      `root_doc "${project.conf.rootDoc}" names no document: set root_doc to the document the site starts at, or create ${project.conf.rootDoc}${project.conf.sourceSuffixes[0]}`,
    ),
  ];
}

const navigationOf: DocumentCheck = async (index, docname, doc, changed) => {
  const file = index.project.docs.get(docname)!;
  const findings: Finding[] = doc.problems.map((p) => finding(file, p.line, 'pages', p.message));
  for (const toctree of doc.toctrees) {
    const seen = new Set<string>();
    for (const entry of toctree.entries) {
      const problem = entryProblem(index, docname, entry, seen);
      if (problem) findings.push(finding(file, entry.line, 'navigation', problem));
    }
  }
  if (changed && docname !== index.project.conf.rootDoc && !doc.orphan) {
    const includers = (await index.includers()).get(docname);
    if (!includers || includers.size === 0) findings.push(orphanFinding(index, docname, file));
  }
  return findings;
};

function entryProblem(
  index: SphinxIndex,
  from: string,
  entry: ToctreeEntry,
  seen: Set<string>,
): string | null {
  const { project } = index;
  if (entry.url || entry.target === 'self') return null;
  if (entry.glob) {
    if (globDocnames(project, from, entry).length > 0) return null;
    return `toctree glob "${entry.target}" matches no document: correct the pattern or remove the entry`;
  }
  const docname = entryDocname(project, from, entry);
  if (project.docs.has(docname)) {
    if (seen.has(docname)) return `toctree names "${entry.target}" twice: remove the second entry`;
    seen.add(docname);
    return null;
  }
  if (project.conf.sourceSuffixes.some((s) => project.excluded(`${docname}${s}`))) {
    return `toctree entry "${entry.target}" names a document that exclude_patterns in ${project.confFile} excludes: remove the entry or change exclude_patterns`;
  }
  const guess = suggestDocument(index, docname);
  return `toctree entry "${entry.target}" names no document: ${guess ? `did you mean "${guess}"? ` : ''}entries are document names without extension, relative to this page or "/"-absolute from ${project.sourceDir === '.' ? 'the repository root' : `${project.sourceDir}/`}; create the page or remove the entry`;
}

function orphanFinding(index: SphinxIndex, docname: string, file: string): Finding {
  const { project } = index;
  // The nearest index above the page, else the root document, is where it most likely belongs.
  let parent = project.conf.rootDoc;
  for (let dir = path.posix.dirname(docname); dir !== '.'; dir = path.posix.dirname(dir)) {
    if (project.docs.has(`${dir}/index`) && `${dir}/index` !== docname) {
      parent = `${dir}/index`;
      break;
    }
  }
  const sameDir = path.posix.dirname(parent) === path.posix.dirname(docname);
  const entry = sameDir ? path.posix.basename(docname) : `/${docname}`;
  const mark = file.endsWith('.md') ? '"orphan: true" in its front matter' : '":orphan:" as its first line';
  return finding(
    file,
    null,
    'navigation',
    `this page is in no toctree, so Sphinx warns "document isn't included in any toctree": add "${entry}" to a toctree (for example in ${project.docs.get(parent) ?? parent}), or give the page ${mark} if it is meant to be reached only by links`,
  );
}

const linksOf: DocumentCheck = async (index, docname, doc, _changed, input) => {
  const { project } = index;
  const file = project.docs.get(docname)!;
  const findings: Finding[] = [];
  for (const ref of doc.references) {
    let problem: string | null = null;
    if (ref.kind === 'doc') {
      const target = docnameJoin(docname, ref.target);
      // "project:page" may name a page of another project (intersphinx): not checkable here.
      const external = project.conf.intersphinx && /^[\w.-]+:[^/]/.test(ref.target);
      if (!project.docs.has(target) && !external) {
        const guess = suggestDocument(index, target);
        problem = `:doc: target "${ref.target}" names no document: ${guess ? `did you mean "${guess}"? ` : ''}targets are document names without extension, relative to this page or "/"-absolute`;
      }
    } else if (ref.kind === 'link') problem = linkProblem(index, docname, ref.target);
    else if (ref.kind === 'ref') problem = await refProblem(index, ref.target);
    else problem = await pathProblem(input, project.sourceDir, file, ref.kind, ref.target);
    if (problem) findings.push(finding(file, ref.line, 'links', problem));
  }
  return findings;
};

/** A MyST link to a source file (`[text](page.md#part)`) must name a document; other links are not Sphinx's. */
function linkProblem(index: SphinxIndex, docname: string, target: string): string | null {
  const { project } = index;
  const file = target.replace(/[#?].*$/, '');
  const suffix = project.conf.sourceSuffixes.find((s) => file.endsWith(s));
  if (!suffix || /^[a-z][a-z0-9+.-]*:/i.test(file)) return null;
  let decoded = file;
  try {
    decoded = decodeURI(file);
  } catch {}
  const wanted = docnameJoin(docname, decoded.slice(0, -suffix.length));
  if (project.docs.has(wanted)) return null;
  const guess = suggestDocument(index, wanted);
  const hint = guess
    ? `did you mean "${guess}${project.docs.get(guess.slice(1))?.match(/\.[^.]+$/)?.[0] ?? ''}"? `
    : '';
  return `link "${target}" reaches no document: ${hint}links are relative to this page, with extension`;
}

async function refProblem(index: SphinxIndex, target: string): Promise<string | null> {
  const label = normalizeLabel(target);
  const labels = await index.labels();
  if (labels.has(label)) return null;
  // "project:label" may name a label of another project (intersphinx): not checkable here.
  if (index.project.conf.intersphinx && label.includes(':')) return null;
  const hint = index.project.conf.autosectionlabel
    ? 'section titles are labels too (sphinx.ext.autosectionlabel)'
    : 'define it with ".. _label:" (MyST: "(label)=") on the line before the section it names';
  return `:ref: target "${target}" is no label of the site: use an existing label or ${hint}`;
}

async function pathProblem(
  input: CheckInput,
  sourceDir: string,
  file: string,
  directive: string,
  target: string,
): Promise<string | null> {
  const resolved = directivePath(sourceDir, file, target);
  if (resolved === null) return null; // URLs, docutils' standard includes
  if (resolved.startsWith('../') || resolved === '..') {
    return `${directive} "${target}" points outside the repository: use a path inside it`;
  }
  if ((await input.tree.exists(resolved)) === 'file') return null;
  const image = directive === 'image' || directive === 'figure';
  // `image.*` lets Sphinx pick among image.png, image.svg…
  if (image && /\.\*$/.test(resolved)) {
    const stem = resolved.slice(0, -1);
    const listed = await input.tree.listFiles(path.posix.dirname(resolved));
    if (listed.some((f) => f.startsWith(stem) && !f.slice(stem.length).includes('/'))) return null;
  }
  // An image path with one "../" too many still shows on the built site (a browser stops at the
  // site's root, where html_static_path lands): sites rely on it, so it is not reported.
  const pageDir = relativeTo(sourceDir, path.posix.dirname(file));
  if (image && pageDir !== null && !target.startsWith('/')) {
    const asUrl = path.posix.resolve(`/${pageDir}`, target).slice(1);
    if ((await input.tree.exists(joinRel(sourceDir, asUrl))) === 'file') return null;
  }
  return `${directive} "${target}" reaches no file (looked for ${resolved}): correct the path (relative to this file, or "/"-absolute from ${sourceDir === '.' ? 'the repository root' : `${sourceDir}/`}) or add the file`;
}
