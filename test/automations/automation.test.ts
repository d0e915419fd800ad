import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  automationCreateInput,
  MAX_INSTRUCTION_LENGTH,
  parseAutomation,
  parseAutomationUpdate,
  unknownRepositories,
} from '../../src/automations/automation.ts';
import { AUTOMATION_PRESETS } from '../../src/automations/presets.ts';
import { DocwrightError, type FieldError } from '../../src/errors.ts';

/** The field errors `parse` throws for `input`. */
function fieldsOf(parse: (input: unknown) => unknown, input: unknown): FieldError[] {
  try {
    parse(input);
  } catch (error) {
    assert.ok(error instanceof DocwrightError);
    assert.equal(error.code, 'invalid-request');
    return error.fields ?? [];
  }
  assert.fail(`accepted ${JSON.stringify(input)}`);
}

const base = { name: 'Docs for merged changes', instruction: 'Update the docs.' };

describe('automations: defaults', () => {
  test('a code-change automation watches every context repository, any path, and skips no-docs', () => {
    assert.deepEqual(parseAutomation({ ...base, trigger: { type: 'code-change' } }), {
      name: 'Docs for merged changes',
      trigger: { type: 'code-change', repositories: [], paths: [], skipLabels: ['no-docs'] },
      instruction: 'Update the docs.',
      draft: false,
      enabled: true,
    });
  });

  test('a schedule runs in UTC without batching unless told; names, instructions and cron are trimmed', () => {
    const automation = parseAutomation({
      name: '  Weekly  ',
      trigger: { type: 'schedule', cron: ' 0 9 * * 1 ' },
      instruction: '\n  Check the links.  \n',
      draft: true,
      enabled: false,
    });
    assert.deepEqual(automation, {
      name: 'Weekly',
      trigger: { type: 'schedule', cron: '0 9 * * 1', timeZone: 'UTC', batch: false },
      instruction: 'Check the links.',
      draft: true,
      enabled: false,
    });
    const batch = parseAutomation({
      ...base,
      trigger: { type: 'schedule', cron: '30 2 * * *', timeZone: 'Europe/Berlin', batch: true },
    });
    assert.deepEqual(batch.trigger, {
      type: 'schedule',
      cron: '30 2 * * *',
      timeZone: 'Europe/Berlin',
      batch: true,
    });
  });

  test('docs-push and manual triggers', () => {
    assert.deepEqual(parseAutomation({ ...base, trigger: { type: 'docs-push' } }).trigger, {
      type: 'docs-push',
      paths: [],
    });
    assert.deepEqual(
      parseAutomation({ ...base, trigger: { type: 'docs-push', paths: ['**/*.mdx'] } }).trigger,
      {
        type: 'docs-push',
        paths: ['**/*.mdx'],
      },
    );
    assert.deepEqual(parseAutomation({ ...base, trigger: { type: 'manual' } }).trigger, { type: 'manual' });
  });

  test('an instruction of 100,000 characters is taken, trimmed first', () => {
    const instruction = `  ${'x'.repeat(MAX_INSTRUCTION_LENGTH)}  `;
    assert.equal(
      parseAutomation({ ...base, instruction, trigger: { type: 'manual' } }).instruction.length,
      MAX_INSTRUCTION_LENGTH,
    );
  });
});

describe('automations: errors name the field', () => {
  const cases: [string, unknown, FieldError[]][] = [
    [
      'nothing',
      {},
      [
        { field: 'name', message: 'Invalid input: expected string, received undefined' },
        { field: 'trigger', message: 'must be an object with a type, such as {"type": "code-change"}' },
        { field: 'instruction', message: 'Invalid input: expected string, received undefined' },
      ],
    ],
    [
      'empty name and instruction',
      { name: '  ', instruction: ' \n ', trigger: { type: 'manual' } },
      [
        { field: 'name', message: 'must not be empty' },
        { field: 'instruction', message: 'must not be empty' },
      ],
    ],
    [
      'an unknown trigger type',
      { ...base, trigger: { type: 'nightly' } },
      [{ field: 'trigger.type', message: 'must be one of code-change, schedule, docs-push, manual' }],
    ],
    [
      'a schedule without a cron',
      { ...base, trigger: { type: 'schedule' } },
      [{ field: 'trigger.cron', message: 'Invalid input: expected string, received undefined' }],
    ],
    [
      'a cron of 6 fields',
      { ...base, trigger: { type: 'schedule', cron: '0 0 9 * * 1' } },
      [
        {
          field: 'trigger.cron',
          message:
            'must have 5 fields (minute hour day-of-month month day-of-week), such as "0 9 * * 1"; it has 6',
        },
      ],
    ],
    [
      'an unknown time zone',
      { ...base, trigger: { type: 'schedule', cron: '0 9 * * 1', timeZone: 'Europe/Atlantis' } },
      [
        {
          field: 'trigger.timeZone',
          message: 'is not a known time zone (such as Europe/Berlin or UTC): Europe/Atlantis',
        },
      ],
    ],
    [
      'a field of another trigger type',
      { ...base, trigger: { type: 'code-change', cron: '0 9 * * 1' } },
      [{ field: 'trigger.cron', message: 'is not a known field' }],
    ],
    [
      'a glob the matcher refuses',
      { ...base, trigger: { type: 'code-change', paths: ['src/**', '!(vendor)/**'] } },
      [
        {
          field: 'trigger.paths.1',
          message:
            'must be a glob such as **/*.mdx (invalid glob "!(vendor)/**": negated patterns "!(…)" are not supported)',
        },
      ],
    ],
    [
      'a repository named twice, and a name that is no slug',
      { ...base, trigger: { type: 'code-change', repositories: ['api', 'api', 'a b'] } },
      [
        { field: 'trigger.repositories.2', message: 'must be the name of a context repository, or docs' },
        { field: 'trigger.repositories', message: 'must not name one twice' },
      ],
    ],
    [
      'an instruction over 100,000 characters',
      { ...base, instruction: 'x'.repeat(MAX_INSTRUCTION_LENGTH + 1), trigger: { type: 'manual' } },
      [{ field: 'instruction', message: 'Too big: expected string to have <=100000 characters' }],
    ],
    [
      'a draft that is not a boolean, and an unknown field',
      { ...base, trigger: { type: 'manual' }, draft: 'yes', owner: 'me' },
      [
        { field: 'owner', message: 'is not a known field' },
        { field: 'draft', message: 'Invalid input: expected boolean, received string' },
      ],
    ],
  ];
  for (const [name, input, expected] of cases) {
    test(name, () => {
      assert.deepEqual(
        fieldsOf(parseAutomation, input).sort((a, b) => a.field.localeCompare(b.field)),
        expected.sort((a, b) => a.field.localeCompare(b.field)),
      );
    });
  }
});

describe('automation updates', () => {
  test('any subset of the fields; a trigger is validated whole', () => {
    assert.deepEqual(parseAutomationUpdate({}), {});
    assert.deepEqual(parseAutomationUpdate({ enabled: false }), { enabled: false });
    assert.deepEqual(parseAutomationUpdate({ trigger: { type: 'schedule', cron: '0 0 * * *' } }), {
      trigger: { type: 'schedule', cron: '0 0 * * *', timeZone: 'UTC', batch: false },
    });
    assert.deepEqual(fieldsOf(parseAutomationUpdate, { trigger: { type: 'schedule', cron: '0 0 31 2 *' } }), [
      { field: 'trigger.cron', message: 'never fires: no date matches it' },
    ]);
    assert.deepEqual(fieldsOf(parseAutomationUpdate, { id: 'aut_1' }), [
      { field: 'id', message: 'is not a known field' },
    ]);
  });
});

describe('unknownRepositories', () => {
  test('names that are neither a context repository nor docs', () => {
    const trigger = automationCreateInput.parse({
      ...base,
      trigger: { type: 'code-change', repositories: ['api', 'docs', 'web'] },
    }).trigger;
    assert.deepEqual(unknownRepositories(trigger, ['api', 'sdk']), [
      {
        field: 'trigger.repositories.2',
        message: 'names no context repository of the project (it has api, sdk)',
      },
    ]);
    assert.deepEqual(unknownRepositories(trigger, ['api', 'web']), []);
    assert.equal(
      unknownRepositories(trigger, [])[0]?.message,
      'names no context repository of the project (it has none)',
    );
    assert.deepEqual(unknownRepositories({ type: 'manual' }, []), []);
  });
});

describe('presets', () => {
  test('the four of the dashboard, each a valid automation', () => {
    assert.deepEqual(
      AUTOMATION_PRESETS.map((p) => p.name.toLowerCase()),
      [
        'update docs for merged code changes',
        'draft a changelog entry',
        'fix broken links',
        'enforce the style guide',
      ],
    );
    assert.equal(new Set(AUTOMATION_PRESETS.map((p) => p.id)).size, AUTOMATION_PRESETS.length);
    for (const preset of AUTOMATION_PRESETS) {
      const automation = parseAutomation(preset.automation);
      assert.equal(automation.name, preset.name);
      assert.ok(automation.instruction.length > 200, preset.id);
      assert.ok(preset.description.endsWith('.'));
    }
    const types = AUTOMATION_PRESETS.map((p) => parseAutomation(p.automation).trigger.type);
    assert.deepEqual(types, ['code-change', 'schedule', 'schedule', 'docs-push']);
  });
});
