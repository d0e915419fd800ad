import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  dueFiring,
  latestScheduledTime,
  MISSED_WINDOW_MS,
  nextFireTime,
  parseSchedule,
  type Schedule,
  ScheduleError,
  scheduleProblem,
} from '../../src/automations/schedule.ts';

const at = (iso: string) => new Date(iso);
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** A clock read every `stepMs` from `from` to `to`. */
function ticks(from: string, to: string, stepMs: number): Date[] {
  const out: Date[] = [];
  for (let t = Date.parse(from); t <= Date.parse(to); t += stepMs) out.push(new Date(t));
  return out;
}

/**
 * What a service does with `dueFiring` at each reading of its clock: fire or skip, then store
 * the scheduled time as handled. Returns what it did, in order.
 */
function service(schedule: Schedule, clock: Date[], handledThrough: Date): string[] {
  let handled = handledThrough;
  const done: string[] = [];
  for (const now of clock) {
    const decision = dueFiring(schedule, { now, handledThrough: handled });
    if (decision.action === 'wait') continue;
    done.push(`${decision.action} ${decision.scheduledFor.toISOString()}`);
    handled = decision.scheduledFor;
  }
  return done;
}

describe('parseSchedule', () => {
  test('5 fields in an IANA time zone, UTC by default', () => {
    const schedule = parseSchedule(' 0  9 * * MON ');
    assert.equal(schedule.cron, '0  9 * * MON');
    assert.equal(schedule.timeZone, 'UTC');
    assert.equal(
      nextFireTime(schedule, at('2025-01-01T00:00:00Z'))?.toISOString(),
      '2025-01-06T09:00:00.000Z',
    );
    assert.equal(parseSchedule('30 2 1-7 JAN,JUL *', 'Europe/Berlin').timeZone, 'Europe/Berlin');
    assert.equal(parseSchedule('0 0 L * *').cron, '0 0 L * *');
  });

  test('what is wrong is said, with the field at fault', () => {
    const cases: [string, string | undefined, 'cron' | 'timeZone', RegExp][] = [
      ['* * * *', undefined, 'cron', /must have 5 fields .* it has 4/],
      ['0 * * * * *', undefined, 'cron', /it has 6/],
      ['@daily', undefined, 'cron', /it has 1/],
      ['', undefined, 'cron', /it has 0/],
      ['61 * * * *', undefined, 'cron', /not a valid cron expression: Invalid value for minute: 61/],
      ['0 9 * * FUNDAY', undefined, 'cron', /not a valid cron expression/],
      ['0 0 30 2 *', undefined, 'cron', /never fires/],
      [`0 9 * * ${'1,'.repeat(100)}1`, undefined, 'cron', /at most 200 characters/],
      ['0 9 * * *', 'Mars/Olympus_Mons', 'timeZone', /not a known time zone/],
      ['0 9 * * *', '+01:00', 'timeZone', /IANA time zone/],
      ['0 9 * * *', '', 'timeZone', /IANA time zone/],
    ];
    for (const [cron, zone, field, message] of cases) {
      const problem = scheduleProblem(cron, zone);
      assert.ok(problem instanceof ScheduleError, `${cron} ${zone}`);
      assert.equal(problem.field, field, `${cron} ${zone}`);
      assert.match(problem.message, message);
      assert.throws(() => parseSchedule(cron, zone), ScheduleError);
    }
    assert.equal(scheduleProblem('*/15 * * * *', 'America/New_York'), null);
  });
});

describe('scheduled times', () => {
  const daily = parseSchedule('0 9 * * *');

  test('the next is strictly after; the latest is at or before now and strictly after the one given', () => {
    assert.equal(nextFireTime(daily, at('2025-01-02T09:00:00Z'))?.toISOString(), '2025-01-03T09:00:00.000Z');
    assert.equal(
      nextFireTime(daily, at('2025-01-02T08:59:59.999Z'))?.toISOString(),
      '2025-01-02T09:00:00.000Z',
    );
    const since = at('2025-01-01T00:00:00Z');
    assert.equal(
      latestScheduledTime(daily, at('2025-01-02T09:00:00Z'), since)?.toISOString(),
      '2025-01-02T09:00:00.000Z',
    );
    assert.equal(
      latestScheduledTime(daily, at('2025-01-02T08:59:59.999Z'), since)?.toISOString(),
      '2025-01-01T09:00:00.000Z',
    );
    assert.equal(latestScheduledTime(daily, at('2025-01-02T09:00:00Z'), at('2025-01-02T09:00:00Z')), null);
    assert.equal(latestScheduledTime(daily, at('2025-01-01T08:00:00Z'), since), null);
    assert.equal(
      latestScheduledTime(daily, since, at('2025-01-05T00:00:00Z')),
      null,
      'now before the one given',
    );
  });

  test('across a week of each DST change, every time is the latest at itself and the next after the one before', () => {
    for (const [cron, zone, from] of [
      ['30 2 * * *', 'Europe/Berlin', '2025-03-27T00:00:00Z'],
      ['30 2 * * *', 'Europe/Berlin', '2025-10-23T00:00:00Z'],
      ['*/30 1,2 * * *', 'America/New_York', '2025-03-06T00:00:00Z'],
      ['*/30 1,2 * * *', 'America/New_York', '2025-10-30T00:00:00Z'],
      ['15 * * * *', 'Australia/Lord_Howe', '2025-04-03T00:00:00Z'],
    ] as const) {
      const schedule = parseSchedule(cron, zone);
      let previous = at(from);
      for (let i = 0; i < 40; i++) {
        const time = nextFireTime(schedule, previous)!;
        assert.ok(time > previous);
        assert.equal(
          latestScheduledTime(schedule, time, previous)?.getTime(),
          time.getTime(),
          `${zone} ${time.toISOString()}`,
        );
        assert.equal(latestScheduledTime(schedule, new Date(time.getTime() - 1), previous), null);
        previous = time;
      }
    }
  });
});

describe('firing across daylight saving time, checked every minute', () => {
  test('Europe/Berlin, 02:30 daily: on the day 02:00 becomes 03:00 it fires at 03:00, and once on the day 02:00–03:00 repeats', () => {
    const schedule = parseSchedule('30 2 * * *', 'Europe/Berlin');
    assert.deepEqual(
      service(
        schedule,
        ticks('2025-03-29T00:00:00Z', '2025-03-31T23:59:00Z', MINUTE),
        at('2025-03-29T00:00:00Z'),
      ),
      [
        'fire 2025-03-29T01:30:00.000Z', // 02:30 CET
        'fire 2025-03-30T01:00:00.000Z', // 03:00 CEST: 02:30 does not exist
        'fire 2025-03-31T00:30:00.000Z', // 02:30 CEST
      ],
    );
    assert.deepEqual(
      service(
        schedule,
        ticks('2025-10-25T00:00:00Z', '2025-10-27T23:59:00Z', MINUTE),
        at('2025-10-25T00:00:00Z'),
      ),
      [
        'fire 2025-10-25T00:30:00.000Z', // 02:30 CEST
        'fire 2025-10-26T00:30:00.000Z', // 02:30 CEST, the first of the two; not again at 02:30 CET
        'fire 2025-10-27T01:30:00.000Z', // 02:30 CET
      ],
    );
  });

  test('America/New_York: a fixed time in the skipped hour moves to 03:00; every half hour in the repeated hour fires at both instants, each once', () => {
    const fixed = parseSchedule('30 2 * * *', 'America/New_York');
    assert.deepEqual(
      service(
        fixed,
        ticks('2025-03-09T00:00:00Z', '2025-03-10T12:00:00Z', MINUTE),
        at('2025-03-09T00:00:00Z'),
      ),
      [
        'fire 2025-03-09T07:00:00.000Z', // 03:00 EDT
        'fire 2025-03-10T06:30:00.000Z',
      ],
    );
    const halfHourly = parseSchedule('*/30 1 * * *', 'America/New_York');
    assert.deepEqual(
      service(
        halfHourly,
        ticks('2025-11-02T04:00:00Z', '2025-11-02T12:00:00Z', MINUTE),
        at('2025-11-02T04:00:00Z'),
      ),
      [
        'fire 2025-11-02T05:00:00.000Z', // 01:00 EDT
        'fire 2025-11-02T05:30:00.000Z', // 01:30 EDT
        'fire 2025-11-02T06:00:00.000Z', // 01:00 EST
        'fire 2025-11-02T06:30:00.000Z', // 01:30 EST
      ],
    );
  });
});

describe('missed schedules and clock jumps', () => {
  const daily = parseSchedule('0 9 * * *', 'Europe/Berlin');
  const hourly = parseSchedule('0 * * * *');

  test('after a long downtime, the latest missed time under an hour old fires once', () => {
    const decision = dueFiring(daily, {
      now: at('2025-06-13T07:40:00Z'),
      handledThrough: at('2025-06-01T07:00:00Z'),
    });
    assert.deepEqual(decision, {
      action: 'fire',
      scheduledFor: at('2025-06-13T07:00:00Z'),
      next: at('2025-06-14T07:00:00Z'),
    });
  });

  test('older, it is skipped as missed, once; the earlier missed times are passed over with it', () => {
    const clock = [at('2025-06-13T09:30:00Z'), at('2025-06-13T09:31:00Z'), at('2025-06-13T12:00:00Z')];
    assert.deepEqual(service(daily, clock, at('2025-06-01T07:00:00Z')), ['skip 2025-06-13T07:00:00.000Z']);
    const decision = dueFiring(daily, {
      now: at('2025-06-13T09:30:00Z'),
      handledThrough: at('2025-06-01T07:00:00Z'),
    });
    assert.deepEqual(decision, {
      action: 'skip',
      reason: 'missed',
      scheduledFor: at('2025-06-13T07:00:00Z'),
      next: at('2025-06-14T07:00:00Z'),
    });
  });

  test('the hour is a bound: just under fires, exactly an hour is missed', () => {
    const handledThrough = at('2025-06-12T07:00:00Z');
    const due = at('2025-06-13T07:00:00Z').getTime();
    assert.equal(
      dueFiring(daily, { now: new Date(due + MISSED_WINDOW_MS - 1), handledThrough }).action,
      'fire',
    );
    assert.equal(dueFiring(daily, { now: new Date(due + MISSED_WINDOW_MS), handledThrough }).action, 'skip');
    assert.equal(
      dueFiring(daily, { now: new Date(due + 10 * MINUTE), handledThrough, windowMs: 5 * MINUTE }).action,
      'skip',
    );
  });

  test('times before the automation was created (the first handledThrough) never fire', () => {
    assert.deepEqual(service(hourly, [at('2025-06-13T10:59:00Z')], at('2025-06-13T10:30:00Z')), []);
    assert.deepEqual(service(hourly, [at('2025-06-13T11:00:00Z')], at('2025-06-13T10:30:00Z')), [
      'fire 2025-06-13T11:00:00.000Z',
    ]);
  });

  test('a clock jumping forward over several times fires the latest once; jumping back fires nothing again', () => {
    const clock = [
      at('2025-06-13T10:00:30Z'), // fires 10:00
      at('2025-06-13T13:20:00Z'), // jumps 3 h 20 min: 11:00 and 12:00 pass, 13:00 fires
      at('2025-06-13T11:30:00Z'), // back 1 h 50 min: 11:00, 12:00, 13:00 are not fired now
      at('2025-06-13T12:00:00Z'),
      at('2025-06-13T13:00:00Z'),
      at('2025-06-13T13:59:59Z'),
      at('2025-06-13T14:00:00Z'), // the first time after those handled
    ];
    assert.deepEqual(service(hourly, clock, at('2025-06-13T09:30:00Z')), [
      'fire 2025-06-13T10:00:00.000Z',
      'fire 2025-06-13T13:00:00.000Z',
      'fire 2025-06-13T14:00:00.000Z',
    ]);
    const behind = dueFiring(hourly, {
      now: at('2025-06-13T11:30:00Z'),
      handledThrough: at('2025-06-13T13:00:00Z'),
    });
    assert.deepEqual(
      behind,
      { action: 'wait', next: at('2025-06-13T14:00:00Z') },
      'waits for the first time not yet handled',
    );
  });

  test('any clock, any schedule: no time fires twice, each fires in time or is missed, the handled time only grows', () => {
    const schedules = [
      parseSchedule('*/7 * * * *', 'UTC'),
      parseSchedule('30 2 * * *', 'Europe/Berlin'),
      parseSchedule('0,30 1,2 * * *', 'America/New_York'),
      parseSchedule('45 23 L * *', 'Pacific/Chatham'),
    ];
    const origin = Date.parse('2025-10-24T00:00:00Z');
    fc.assert(
      fc.property(
        fc.constantFrom(...schedules),
        fc.array(fc.integer({ min: -6 * HOUR, max: 30 * HOUR }), { minLength: 1, maxLength: 60 }),
        (schedule, steps) => {
          let now = origin;
          let handled = new Date(origin);
          const seen = new Set<number>();
          for (const step of steps) {
            now += step;
            const decision = dueFiring(schedule, { now: new Date(now), handledThrough: handled });
            if (decision.next !== null) assert.ok(decision.next.getTime() > Math.max(now, handled.getTime()));
            if (decision.action === 'wait') continue;
            const time = decision.scheduledFor.getTime();
            assert.ok(!seen.has(time), 'fired twice');
            seen.add(time);
            assert.ok(time > handled.getTime() && time <= now);
            assert.equal(decision.action === 'fire', now - time < MISSED_WINDOW_MS);
            assert.equal(
              latestScheduledTime(schedule, new Date(now), decision.scheduledFor),
              null,
              'it was the latest',
            );
            handled = decision.scheduledFor;
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  test('a clock read every minute misses nothing and fires everything once', () => {
    const schedule = parseSchedule('*/20 * * * *', 'Europe/Berlin');
    const done = service(
      schedule,
      ticks('2025-10-25T22:00:00Z', '2025-10-26T04:00:00Z', MINUTE),
      at('2025-10-25T22:00:00Z'),
    );
    assert.equal(done.length, 18);
    assert.ok(done.every((d) => d.startsWith('fire ')));
    assert.equal(new Set(done).size, done.length);
  });
});
