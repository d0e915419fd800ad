/**
 * The checks a run applies (SPEC §19), in order: the built-in ones for the site's generator
 * (Mintlify, Sphinx or MkDocs: each says `skipped` on another's site, so one check of each name
 * stands for all three), then style and spelling from the repository's configuration, then the
 * project's commands.
 */
import type { VerificationSettings } from '../types.ts';
import { builtinChecks } from './builtin.ts';
import { commandCheck } from './commands.ts';
import { mkdocsChecks } from './mkdocs-checks.ts';
import { spellingCheck } from './spelling.ts';
import { sphinxChecks } from './sphinx-checks.ts';
import type { Check, CheckOutcome } from './types.ts';
import { valeCheck } from './vale-check.ts';

/**
 * One check per name: the first of `members` that does not skip the tree answers (on the base
 * too, the one that answered on the head); when every member skips, the first's reason stands.
 */
function firstApplicable(name: string, members: Check[]): Check {
  if (members.length === 1) return members[0]!;
  let answered: Check | undefined;
  return {
    name,
    async run(input) {
      const order = input.state === 'base' && answered ? [answered] : members;
      let first: CheckOutcome | undefined;
      for (const member of order) {
        const outcome = await member.run(input);
        if (outcome.skipped === undefined) {
          if (input.state === 'head') answered = member;
          return outcome;
        }
        first ??= outcome;
      }
      if (input.state === 'head') answered = undefined;
      return first!;
    },
  };
}

/** The site checks of every generator, one per name, in the order their names first appear. */
function siteChecks(): Check[] {
  const byName = new Map<string, Check[]>();
  for (const check of [...builtinChecks(), ...sphinxChecks(), ...mkdocsChecks()])
    byName.set(check.name, [...(byName.get(check.name) ?? []), check]);
  return [...byName].map(([name, members]) => firstApplicable(name, members));
}

export function checksFor(settings: VerificationSettings | undefined): Check[] {
  return [
    ...siteChecks(),
    valeCheck(),
    spellingCheck(),
    ...(settings?.commands ?? []).map((command) => commandCheck(command, { hidden: settings?.hidden ?? [] })),
  ];
}
