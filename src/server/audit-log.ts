/**
 * The audit log backend (`--audit-log-path`): each event a line appended to the file (or written
 * to stdout for `-`) as it is handed over, in `--audit-log-format` `json` (the Event) or `legacy`
 * (upstream's one-line text), rotated as upstream's lumberjack rotates it: past
 * `--audit-log-maxsize` megabytes the file is renamed `<name>-<UTC time>.<ext>` (gzipped to
 * `….gz` with `--audit-log-compress`) and a new one started; `--audit-log-maxbackup` keeps that
 * many old files (0: all) and `--audit-log-maxage` removes those older than that many days
 * (0: none). The modes in front of it (`--audit-log-mode`) are server/audit-backends.ts'.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import type { Clock } from '../clock';
import type { AuditEvent } from '../gateway';
import { type AuditBackend, type PluginError, legacyEventLine } from './audit-backends';

export type AuditLogFormat = 'json' | 'legacy';

export interface AuditLogOptions {
  path: string;
  /** Megabytes before rotation; 0: never. */
  maxSizeMb: number;
  /** Old files kept; 0: all. */
  maxBackups: number;
  /** Days an old file is kept; 0: forever. */
  maxAgeDays: number;
  /** Gzip rotated files. */
  compress?: boolean;
  format?: AuditLogFormat;
  clock: Clock;
  /** A write that failed (a full or vanished disk); the events it lost. Default: logged once. */
  onError?: PluginError;
  log?: (message: string) => void;
}

/** lumberjack's backup name: `audit-2006-01-02T15-04-05.000.log` for `audit.log`, in UTC. */
export function backupName(file: string, atMs: number): string {
  const ext = path.extname(file);
  const base = file.slice(0, file.length - ext.length);
  const stamp = new Date(atMs).toISOString().replace(/:/g, '-').replace(/Z$/, '');
  return `${base}-${stamp}${ext}`;
}

/** The log as a backend: `process` writes before it returns (upstream's log writes in the caller). */
export function openAuditLog(options: AuditLogOptions): AuditBackend {
  const line = options.format === 'legacy' ? (e: AuditEvent) => `${legacyEventLine(e)}\n` : (e: AuditEvent) => `${JSON.stringify(e)}\n`;
  let reported = false;
  const failed = (err: Error, events: readonly AuditEvent[]): false => {
    if (options.onError) options.onError('log', err, events);
    else if (!reported) options.log?.(`audit log ${options.path}: ${err.message}`);
    reported = true;
    return false;
  };
  if (options.path === '-') {
    return {
      process(events) {
        try {
          process.stdout.write(events.map(line).join(''));
          return true;
        } catch (err) {
          return failed(err as Error, events);
        }
      },
      close: async () => {},
    };
  }
  const file = path.resolve(options.path);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const limit = options.maxSizeMb * 1024 * 1024;
  let fd = fs.openSync(file, 'a', 0o600);
  let size = fs.fstatSync(fd).size;
  const compressing = new Set<Promise<void>>();

  const prune = () => {
    const dir = path.dirname(file);
    const ext = path.extname(file);
    const prefix = `${path.basename(file, ext)}-`;
    const names = fs.readdirSync(dir).filter((n) => n.startsWith(prefix) && (n.endsWith(ext) || n.endsWith(`${ext}.gz`)));
    // A backup being compressed is there twice for a moment (`x` and `x.gz`): it counts once.
    const backups = [...new Set(names.map((n) => (n.endsWith('.gz') ? n.slice(0, -3) : n)))].sort().reverse();
    const cutoff = options.maxAgeDays > 0 ? options.clock.now() - options.maxAgeDays * 86_400_000 : undefined;
    backups.forEach((name, i) => {
      const variants = [name, `${name}.gz`].map((n) => path.join(dir, n)).filter((f) => fs.existsSync(f));
      const tooMany = options.maxBackups > 0 && i >= options.maxBackups;
      const tooOld = cutoff !== undefined && variants.every((f) => fs.statSync(f).mtimeMs < cutoff);
      if (tooMany || tooOld) for (const f of variants) fs.rmSync(f, { force: true });
    });
  };

  /** Gzip a rotated file beside itself, then drop the original (lumberjack does it in the background too). */
  const compress = (target: string) => {
    const done = pipeline(fs.createReadStream(target), createGzip(), fs.createWriteStream(`${target}.gz`, { mode: 0o600 }))
      .then(() => fs.rmSync(target, { force: true }))
      .catch((err: unknown) => options.log?.(`audit log ${target}: compressing: ${(err as Error).message}`))
      .finally(() => {
        compressing.delete(done);
        prune();
      });
    compressing.add(done);
  };

  const rotate = () => {
    fs.closeSync(fd);
    // Two rotations within one millisecond must not overwrite each other.
    let target = backupName(file, options.clock.now());
    for (let n = 1; fs.existsSync(target) || fs.existsSync(`${target}.gz`); n++)
      target = backupName(file, options.clock.now()).replace(/(\.[^.]*)?$/, `-${n}$1`);
    fs.renameSync(file, target);
    fd = fs.openSync(file, 'a', 0o600);
    size = 0;
    if (options.compress) compress(target);
    else prune();
  };

  return {
    process(events) {
      try {
        let chunk = '';
        for (const event of events) {
          const text = line(event);
          const bytes = Buffer.byteLength(text);
          if (limit > 0 && size > 0 && size + bytes > limit) {
            if (chunk) fs.writeSync(fd, chunk);
            chunk = '';
            rotate();
          }
          chunk += text;
          size += bytes;
        }
        if (chunk) fs.writeSync(fd, chunk);
        return true;
      } catch (err) {
        return failed(err as Error, events);
      }
    },
    async close() {
      await Promise.all(compressing);
      fs.closeSync(fd);
    },
  };
}
