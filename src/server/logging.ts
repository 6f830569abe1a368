/**
 * The server's log: text by default (`keelson: <message> key="value" …`, what the README and
 * the tests read), JSON lines with `--logging-format=json` (upstream's JSON fields: `ts` in
 * seconds, `v`, the fields, `msg`), filtered by verbosity (`-v`). Both go to stdout, which Node
 * writes asynchronously to pipes, so a busy server does not wait for its log reader. Request lines come at `-v=3`, as
 * upstream's HTTP log does. Nothing logged carries a credential or a Secret's data: callers pass
 * only what they mean to show, and request lines hold no headers but the user agent.
 */
export type LogFields = Record<string, string | number | boolean | undefined>;

export interface Logger {
  /** A line at verbosity 0. */
  info(message: string, fields?: LogFields): void;
  /** A line shown only from verbosity `v` on. */
  verbose(v: number, message: string, fields?: LogFields): void;
  enabled(v: number): boolean;
}

export interface LoggerOptions {
  format: 'text' | 'json';
  verbosity: number;
  /** Where lines go (default stdout). */
  write?: (line: string) => void;
}

/** klog's text form of a value: strings quoted, the rest as is. */
function textValue(value: string | number | boolean): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}

export function createLogger(options: LoggerOptions): Logger {
  const enabled = (v: number) => v <= options.verbosity;
  const write = options.write ?? ((text: string) => void process.stdout.write(text));
  if (options.format === 'json') {
    const line = (v: number, message: string, fields?: LogFields) => {
      if (enabled(v)) write(`${JSON.stringify({ ts: Date.now() / 1000, v, ...fields, msg: message })}\n`);
    };
    return { info: (m, f) => line(0, m, f), verbose: line, enabled };
  }
  const line = (v: number, message: string, fields?: LogFields) => {
    if (!enabled(v)) return;
    let text = `keelson: ${message}`;
    for (const [key, value] of Object.entries(fields ?? {})) if (value !== undefined) text += ` ${key}=${textValue(value)}`;
    write(`${text}\n`);
  };
  return { info: (m, f) => line(0, m, f), verbose: line, enabled };
}
