/**
 * The audit log backend (`--audit-log-path`): one JSON event per line, appended to the file (or
 * written to stdout for `-`), rotated as upstream's lumberjack rotates it: past
 * `--audit-log-maxsize` megabytes the file is renamed `<name>-<UTC time>.<ext>` and a new one
 * started; `--audit-log-maxbackup` keeps that many old files (0: all) and
 * `--audit-log-maxage` removes those older than that many days (0: none).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Clock } from '../clock';
import type { AuditEvent, AuditSink } from '../gateway';

export interface AuditLogOptions {
  path: string;
  /** Megabytes before rotation; 0: never. */
  maxSizeMb: number;
  /** Old files kept; 0: all. */
  maxBackups: number;
  /** Days an old file is kept; 0: forever. */
  maxAgeDays: number;
  clock: Clock;
  log?: (message: string) => void;
}

export interface AuditLog {
  sink: AuditSink;
  close(): Promise<void>;
}

/** lumberjack's backup name: `audit-2006-01-02T15-04-05.000.log` for `audit.log`, in UTC. */
export function backupName(file: string, atMs: number): string {
  const ext = path.extname(file);
  const base = file.slice(0, file.length - ext.length);
  const stamp = new Date(atMs).toISOString().replace(/:/g, '-').replace(/Z$/, '');
  return `${base}-${stamp}${ext}`;
}

export function openAuditLog(options: AuditLogOptions): AuditLog {
  if (options.path === '-') {
    return { sink: (event) => void process.stdout.write(`${JSON.stringify(event)}\n`), close: async () => {} };
  }
  const file = path.resolve(options.path);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const limit = options.maxSizeMb * 1024 * 1024;
  let fd = fs.openSync(file, 'a', 0o600);
  let size = fs.fstatSync(fd).size;
  // Upstream's batch mode, simply: events queue in memory and are written together once the
  // current turn of the event loop ends, so a request never waits for the disk.
  let pending: string[] = [];
  let scheduled = false;
  let reported = false;

  const prune = () => {
    const dir = path.dirname(file);
    const ext = path.extname(file);
    const prefix = `${path.basename(file, ext)}-`;
    const backups = fs
      .readdirSync(dir)
      .filter((n) => n.startsWith(prefix) && n.endsWith(ext))
      .sort()
      .reverse();
    const cutoff = options.maxAgeDays > 0 ? options.clock.now() - options.maxAgeDays * 86_400_000 : undefined;
    backups.forEach((name, i) => {
      const full = path.join(dir, name);
      const tooMany = options.maxBackups > 0 && i >= options.maxBackups;
      const tooOld = cutoff !== undefined && fs.statSync(full).mtimeMs < cutoff;
      if (tooMany || tooOld) fs.rmSync(full, { force: true });
    });
  };

  const rotate = () => {
    fs.closeSync(fd);
    // Two rotations within one millisecond must not overwrite each other.
    let target = backupName(file, options.clock.now());
    for (let n = 1; fs.existsSync(target); n++) target = backupName(file, options.clock.now()).replace(/(\.[^.]*)?$/, `-${n}$1`);
    fs.renameSync(file, target);
    fd = fs.openSync(file, 'a', 0o600);
    size = 0;
    prune();
  };

  const flush = () => {
    scheduled = false;
    const lines = pending;
    pending = [];
    try {
      let chunk = '';
      for (const line of lines) {
        const bytes = Buffer.byteLength(line);
        if (limit > 0 && size > 0 && size + bytes > limit) {
          if (chunk) fs.writeSync(fd, chunk);
          chunk = '';
          rotate();
        }
        chunk += line;
        size += bytes;
      }
      if (chunk) fs.writeSync(fd, chunk);
    } catch (err) {
      // A full or vanished disk must not take the server down; say so once.
      if (!reported) options.log?.(`audit log ${file}: ${(err as Error).message}`);
      reported = true;
    }
  };

  return {
    sink(event: AuditEvent) {
      pending.push(`${JSON.stringify(event)}\n`);
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
    async close() {
      flush();
      fs.closeSync(fd);
    },
  };
}
