/**
 * How bench/api.ts measures: autocannon flat out, an open-loop pacer, medians of slices, the
 * server's CPU time per request, a CPU profile's top functions, the table of figures.
 */

import { readFileSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';

/** How long, how hard: the same for every target of a run. */
export interface Load {
  duration: number;
  warmup: number;
  connections: number;
}

const log = (message: string) => process.stderr.write(`${message}\n`);

// autocannon ships no types; this is the part of its API used here.
export interface AutocannonRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
  setupRequest?: (request: AutocannonRequest) => AutocannonRequest;
}
interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number; average: number; max: number };
  duration: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodeStats: Record<string, { count: number }>;
}
const autocannon = createRequire(import.meta.url)('autocannon') as (options: {
  url: string;
  connections: number;
  duration: number;
  requests?: AutocannonRequest[];
}) => Promise<AutocannonResult>;

export interface Figures {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  statuses: string;
  /** CPU time the server process (all its threads) spent per answered request, in µs. */
  cpuUs?: number;
}

/** User + system CPU time of process `pid` and its threads so far, in µs (Linux /proc). */
function cpuTimeUs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}
const CLOCK_TICKS_PER_SECOND = 100;

/** `requests` flat out over `load.connections` connections for `load.duration` s (after a warm-up). */
export async function measure(
  name: string,
  url: string,
  requests: AutocannonRequest[],
  load: Load,
  pid?: number,
): Promise<Figures> {
  const { duration, warmup, connections } = load;
  if (warmup > 0) await autocannon({ url, connections, duration: warmup, requests });
  log(`measuring ${name} for ${duration} s…`);
  const cpuBefore = cpuTimeUs(pid);
  const r = await autocannon({ url, connections, duration, requests });
  const cpuAfter = cpuTimeUs(pid);
  return {
    name,
    ...(cpuBefore !== undefined &&
      cpuAfter !== undefined && { cpuUs: (cpuAfter - cpuBefore) / r.requests.total }),
    rps: r.requests.total / r.duration,
    p50: r.latency.p50,
    p99: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
    statuses: Object.entries(r.statusCodeStats)
      .map(([code, { count }]) => `${code}×${count}`)
      .join(' '),
  };
}

/** The slices of one target as one row: median req/s, p50 and p99; counts summed. */
export function medianOf(name: string, slices: Figures[]): Figures {
  const median = (pick: (f: Figures) => number) => {
    const sorted = slices.map(pick).sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)]!;
  };
  const statuses = new Map<string, number>();
  for (const slice of slices) {
    for (const part of slice.statuses.split(' ').filter(Boolean)) {
      const [code = '', count = '0'] = part.split('×');
      statuses.set(code, (statuses.get(code) ?? 0) + Number(count));
    }
  }
  return {
    name,
    rps: median((f) => f.rps),
    p50: median((f) => f.p50),
    p99: median((f) => f.p99),
    ...(slices.every((f) => f.cpuUs !== undefined) && { cpuUs: median((f) => f.cpuUs!) }),
    non2xx: slices.reduce((n, f) => n + f.non2xx, 0),
    errors: slices.reduce((n, f) => n + f.errors, 0),
    statuses: [...statuses].map(([code, count]) => `${code}×${count}`).join(' '),
  };
}

/**
 * Open loop: `rate` requests per second at even intervals over at most
 * `load.connections` keep-alive sockets, whatever the answers take. (autocannon's
 * own rate limit sends each connection's share in a burst at the start of
 * every second, which measures bursts, not a steady 1,000/s.) Latency counts
 * from when a request was due, so a server that falls behind is not excused
 * by the generator waiting for it (coordinated omission).
 */
export async function paced(
  name: string,
  base: string,
  rate: number,
  next: () => { path: string; key: string; body: string },
  load: Load,
  pid?: number,
): Promise<Figures> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: load.connections });
  const one = (due: number, request: ReturnType<typeof next>) =>
    new Promise<{ status: number; ms: number }>((resolve) => {
      const req = http.request(
        `${base}${request.path}`,
        {
          method: 'POST',
          agent,
          headers: { authorization: `Bearer ${request.key}`, 'content-type': 'application/json' },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - due }));
        },
      );
      req.on('error', () => resolve({ status: 0, ms: performance.now() - due }));
      req.end(request.body);
    });
  const phase = async (seconds: number) => {
    const pending: Promise<{ status: number; ms: number }>[] = [];
    const start = performance.now();
    const total = Math.round(rate * seconds);
    while (pending.length < total) {
      // Everything due by now goes out now; then sleep a millisecond.
      const dueCount = Math.min(total, Math.floor(((performance.now() - start) * rate) / 1000) + 1);
      while (pending.length < dueCount) pending.push(one(start + (pending.length * 1000) / rate, next()));
      await new Promise((r) => setTimeout(r, 1));
    }
    const answers = await Promise.all(pending);
    return { answers, elapsed: (performance.now() - start) / 1000 };
  };
  if (load.warmup > 0) await phase(load.warmup);
  log(`measuring ${name} for ${load.duration} s…`);
  const cpuBefore = cpuTimeUs(pid);
  const { answers, elapsed } = await phase(load.duration);
  const cpuAfter = cpuTimeUs(pid);
  agent.destroy();
  const sorted = answers.map((a) => a.ms).sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  const statuses = new Map<number, number>();
  for (const { status } of answers) statuses.set(status, (statuses.get(status) ?? 0) + 1);
  return {
    name,
    ...(cpuBefore !== undefined &&
      cpuAfter !== undefined && { cpuUs: (cpuAfter - cpuBefore) / answers.length }),
    rps: answers.length / elapsed,
    p50: at(0.5),
    p99: at(0.99),
    non2xx: answers.filter((a) => a.status !== 0 && (a.status < 200 || a.status > 299)).length,
    errors: statuses.get(0) ?? 0,
    statuses: [...statuses.entries()].map(([code, count]) => `${code}×${count}`).join(' '),
  };
}

/** Self time by function from a V8 .cpuprofile, largest first. */
export function topFunctions(file: string, root: string, limit = 25): string {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as {
    nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
    samples: number[];
    timeDeltas: number[];
  };
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  const byPackage = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const frame = byId.get(id)!.callFrame;
    const dt = profile.timeDeltas[i] ?? 0;
    total += dt;
    const where = frame.url.replace(/^file:\/\//, '').replace(`${root}/`, '');
    const label = `${frame.functionName || '(anonymous)'} ${where ? `${where}:${frame.lineNumber + 1}` : ''}`;
    self.set(label, (self.get(label) ?? 0) + dt);
    const pkg =
      /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(where)?.[1] ??
      (where.startsWith('src/')
        ? where.split('/').slice(0, 2).join('/')
        : where.startsWith('node:')
          ? 'node:*'
          : frame.functionName);
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + dt);
  });
  const pct = (t: number) => `${((100 * t) / total).toFixed(1).padStart(5)}%`;
  const top = (m: Map<string, number>) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, limit)
      .map(([label, t]) => `  ${pct(t)}  ${label}`)
      .join('\n');
  return `self time by package/area:\n${top(byPackage)}\n\nself time by function:\n${top(self)}`;
}

export const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

export function printTable(rows: Figures[]): void {
  const header = [
    'target',
    'req/s',
    'p50 ms',
    'p99 ms',
    'server CPU µs/req',
    'non-2xx',
    'errors',
    'statuses',
  ];
  const cells = rows.map((r) => [
    r.name,
    fmt(r.rps),
    fmt(r.p50, 1),
    fmt(r.p99, 1),
    r.cpuUs === undefined ? '' : fmt(r.cpuUs, 1),
    String(r.non2xx),
    String(r.errors),
    r.statuses,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) =>
    c.map((v, i) => (i === 0 || i === 7 ? v.padEnd(widths[i]!) : v.padStart(widths[i]!))).join('  ');
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const c of cells) console.log(line(c));
}
