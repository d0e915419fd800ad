/**
 * The checks a run applies (SPEC §19), in order: the built-in ones for the site's generator,
 * then style and spelling from the repository's configuration, then the project's commands.
 */
import type { VerificationSettings } from '../types.ts';
import type { Check } from './types.ts';

export function checksFor(_settings: VerificationSettings | undefined): Check[] {
  return [];
}
