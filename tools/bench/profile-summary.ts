/**
 * Where the time goes in a V8 `.cpuprofile` (from `node --cpu-prof`): self time by area
 * (Keelson's own folders, each npm package, Node internals, GC) and the functions with the most
 * self and inclusive time. Inclusive time counts a function once per sample however deep it
 * recurses.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  /** Sampled time that was not idle, µs. */
  busyUs: number;
  /** Busy time by stage of a request (STAGES), each sample given to the first stage on its stack. */
  stages: Array<[string, number]>;
  areas: Array<[string, number]>;
  selfTop: Array<[string, number]>;
  inclusiveTop: Array<[string, number]>;
}

interface Frame {
  functionName: string;
  url: string;
}

/**
 * Stages of Keelson's request path, recognised by module path or function name; a sample goes
 * to the first stage (in this order) that any frame on its stack matches, else "other". Paths
 * that move only make their time show up as "other", so the table degrades, it does not lie.
 */
const STAGES: Array<[string, (f: Frame) => boolean]> = [
  ['GC (main thread; V8 worker threads come on top)', (f) => f.functionName === '(garbage collector)'],
  ['managedFields (src/core/apply, managed-fields)', (f) => /\/src\/core\/apply\/|managed-fields/.test(f.url)],
  ['watch cache ingest (store watch → cache)', (f) => /\/src\/store\/[^/]*watch|\/src\/core\/cache\//.test(f.url)],
  [
    'etcd client calls (src/store/etcd/client, h2-connection, hpack, generated codecs)',
    (f) =>
      /\/src\/store\/etcd\/(client|h2-connection|hpack)|\/src\/gen\/etcd\/|@bufbuild\/protobuf|@grpc|\/etcd3\/|cockatiel|protobufjs|node:internal\/http2|\/long\//.test(
        f.url,
      ),
  ],
  // The bytes go out from `endAll`, after the turn's requests were handled (gateway/express-adapter.ts).
  [
    'response: encode + write',
    (f) => (f.functionName === 'writeObject' && /respond/.test(f.url)) || (f.functionName === 'endAll' && /express-adapter/.test(f.url)),
  ],
  ['request body: read, decode, field validation', (f) => /strict-json|field-validation|\/gateway\/body/.test(f.url)],
  ['storage encode/decode, deep copies (object-codec)', (f) => /object-codec/.test(f.url)],
  ['validation, defaults, strategy', (f) => /\/src\/core\/(validation|resources)\//.test(f.url)],
  ['gateway pipeline (request info, authn/z, routing)', (f) => /\/src\/gateway\//.test(f.url)],
  ['core, registry (other)', (f) => /\/src\/core\//.test(f.url)],
  ['HTTP server + TLS (node http, net, writev)', (f) => /node:_http|node:net|node:_tls|stream_base_commons/.test(f.url) || f.functionName === 'writev'],
];

function stageOf(stack: Frame[]): string {
  for (const [name, test] of STAGES) if (stack.some(test)) return name;
  return 'other (node internals, microtasks, program)';
}

/** The area a frame's script belongs to. */
export function areaOf(url: string, functionName: string): string {
  if (!url) {
    if (functionName === '(garbage collector)') return 'GC';
    if (functionName === '(idle)') return 'idle';
    if (functionName === '(program)') return 'V8/native (program)';
    return `native: ${functionName || '(anonymous)'}`;
  }
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return `npm ${pkg[1]}`;
  const node = /^node:(?:internal\/)?([^/]+(?:\/[^/.]+)?)/.exec(url);
  if (node) return `node ${node[1]}`;
  const own = /\/(src|tools|test)\/([^/]+)(?:\/([^/]+))?/.exec(url);
  if (own) return `keelson ${own[1]}/${own[2]}${own[3] && !own[3].endsWith('.js') ? `/${own[3]}` : ''}`;
  return url;
}

function frameName(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const file = url.replace(/^.*\/(node_modules\/|src\/|tools\/|test\/)/, '$1').replace(/^file:\/\//, '');
  return `${functionName || '(anonymous)'} ${file ? `${file}:${lineNumber + 1}` : ''}`.trim();
}

/**
 * Summarise a profile, counting only samples inside `window` (µs on the profiled process's
 * monotonic clock, which V8 profiles share with process.hrtime) when given: the measured
 * period without start-up.
 */
export function summarizeProfile(file: string, window?: { startUs: number; endUs: number }, top = 15): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<number, number>();
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i] ?? 0;
    if (window && (at < window.startUs || at > window.endUs)) continue;
    self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }

  const areas = new Map<string, number>();
  const stages = new Map<string, number>();
  const selfByName = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let busyUs = 0;
  for (const [id, us] of self) {
    const node = byId.get(id)!;
    const area = areaOf(node.callFrame.url, node.callFrame.functionName);
    if (area === 'idle') continue;
    busyUs += us;
    areas.set(area, (areas.get(area) ?? 0) + us);
    const name = frameName(node);
    selfByName.set(name, (selfByName.get(name) ?? 0) + us);
    const seen = new Set<string>();
    const stack: Frame[] = [];
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const n = byId.get(cur)!;
      if (n.callFrame.functionName === '(root)') break;
      stack.push(n.callFrame);
      const key = frameName(n);
      if (!seen.has(key)) {
        seen.add(key);
        inclusive.set(key, (inclusive.get(key) ?? 0) + us);
      }
    }
    const stage = stageOf(stack);
    stages.set(stage, (stages.get(stage) ?? 0) + us);
  }
  const sorted = (m: Map<string, number>) => [...m.entries()].sort((a, b) => b[1] - a[1]);
  return { busyUs, stages: sorted(stages), areas: sorted(areas), selfTop: sorted(selfByName).slice(0, top), inclusiveTop: sorted(inclusive).slice(0, top * 2) };
}

export function renderProfileSummary(summary: ProfileSummary, title: string): string {
  const pct = (us: number) => `${((us / summary.busyUs) * 100).toFixed(1)}%`;
  const lines = [
    `## ${title}`,
    '',
    `busy (non-idle) sampled time: ${(summary.busyUs / 1000).toFixed(0)} ms`,
    '',
    '| stage (samples by stack) | share |',
    '|---|---:|',
  ];
  for (const [stage, us] of summary.stages) lines.push(`| ${stage} | ${pct(us)} |`);
  lines.push('', '| area (self time) | share |', '|---|---:|');
  for (const [area, us] of summary.areas.slice(0, 20)) lines.push(`| ${area} | ${pct(us)} |`);
  lines.push('', '| function (self time) | share |', '|---|---:|');
  for (const [name, us] of summary.selfTop) lines.push(`| \`${name}\` | ${pct(us)} |`);
  lines.push('', '| function (inclusive time) | share |', '|---|---:|');
  for (const [name, us] of summary.inclusiveTop) lines.push(`| \`${name}\` | ${pct(us)} |`);
  return lines.join('\n');
}
