/**
 * Go's time and duration text forms, as upstream's metav1.Time (RFC 3339, whole seconds),
 * metav1.MicroTime (RFC 3339 with six fraction digits) and metav1.Duration (Go duration
 * strings) write them in JSON.
 */

export interface Timestamp {
  seconds: number;
  nanos: number;
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** Parse RFC 3339 (Go's time.RFC3339 accepts an optional fraction); throws on anything else. */
export function parseRfc3339(text: string): Timestamp {
  const m = RFC3339.exec(text);
  if (!m) throw new Error(`parsing time ${JSON.stringify(text)} as RFC 3339: invalid format`);
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  if (date.getUTCDate() !== day || date.getUTCMonth() !== month - 1 || hour > 23 || minute > 59 || second > 59) {
    throw new Error(`parsing time ${JSON.stringify(text)}: value out of range`);
  }
  let seconds = Math.floor(date.getTime() / 1000);
  if (!m[8]) {
    const offset = (Number(m[10]) * 60 + Number(m[11])) * 60;
    seconds += m[9] === '+' ? -offset : offset;
  }
  const nanos = m[7] ? Number(m[7].padEnd(9, '0')) : 0;
  return { seconds, nanos };
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

/** RFC 3339 in UTC; `fractionDigits` 0 (metav1.Time) or 6 (metav1.MicroTime, always written). */
export function formatRfc3339(ts: Timestamp, fractionDigits: 0 | 6): string {
  const d = new Date(ts.seconds * 1000);
  const base =
    `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)}` +
    `T${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)}`;
  const fraction = fractionDigits === 6 ? `.${pad(Math.floor(ts.nanos / 1000), 6)}` : '';
  return `${base}${fraction}Z`;
}

const UNITS: Record<string, number> = { ns: 1, us: 1e3, µs: 1e3, μs: 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 };

/** Go's time.ParseDuration, in nanoseconds. */
export function parseGoDuration(text: string): number {
  let s = text;
  let sign = 1;
  if (s.startsWith('-') || s.startsWith('+')) {
    sign = s.startsWith('-') ? -1 : 1;
    s = s.slice(1);
  }
  if (s === '0') return 0;
  if (s === '') throw new Error(`time: invalid duration ${JSON.stringify(text)}`);
  let total = 0;
  const part = /^(\d*)(?:\.(\d*))?(ns|us|µs|μs|ms|s|m|h)/;
  while (s.length > 0) {
    const m = part.exec(s);
    if (!m || (m[1] === '' && (m[2] ?? '') === '')) throw new Error(`time: invalid duration ${JSON.stringify(text)}`);
    const unit = UNITS[m[3]!]!;
    total += Number(m[1] || '0') * unit + (m[2] ? Number(`0.${m[2]}`) * unit : 0);
    s = s.slice(m[0].length);
  }
  return sign * Math.round(total);
}

function trimFraction(value: string): string {
  return value.includes('.') ? value.replace(/0+$/, '').replace(/\.$/, '') : value;
}

/** Go's time.Duration.String: `1h2m3.5s`, `1.5ms`, `0s`. */
export function formatGoDuration(nanos: number): string {
  if (nanos === 0) return '0s';
  const sign = nanos < 0 ? '-' : '';
  let n = Math.abs(nanos);
  if (n < 1e9) {
    if (n < 1e3) return `${sign}${n}ns`;
    if (n < 1e6) return `${sign}${trimFraction((n / 1e3).toFixed(3))}µs`;
    return `${sign}${trimFraction((n / 1e6).toFixed(6))}ms`;
  }
  const hours = Math.floor(n / 3600e9);
  n -= hours * 3600e9;
  const minutes = Math.floor(n / 60e9);
  n -= minutes * 60e9;
  const seconds = trimFraction((n / 1e9).toFixed(9));
  if (hours > 0) return `${sign}${hours}h${minutes}m${seconds}s`;
  if (minutes > 0) return `${sign}${minutes}m${seconds}s`;
  return `${sign}${seconds}s`;
}
