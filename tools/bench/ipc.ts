/**
 * Request/response over a forked child's IPC channel: the orchestrator calls named commands
 * in its children (load generators, the Keelson wrapper, the bare server) and awaits results.
 * Messages use Node's `advanced` serialization, so Buffers and typed arrays cross as they are.
 */
import { type ChildProcess, fork } from 'node:child_process';

interface Call {
  id: number;
  cmd: string;
  args: unknown;
}

type Reply = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: string };

/** An event a child sends on its own (not a reply), e.g. `{ event: 'listening', port }`. */
export interface ChildEvent {
  event: string;
  [key: string]: unknown;
}

export class Child {
  private nextId = 1;
  private readonly calls = new Map<number, { resolve(value: unknown): void; reject(err: Error): void }>();
  private readonly exited: Promise<number | null>;
  private output = '';

  constructor(
    readonly process: ChildProcess,
    readonly name: string,
    onEvent: (event: ChildEvent) => void = () => {},
  ) {
    process.on('message', (message: Reply | ChildEvent) => {
      if ('event' in message) {
        onEvent(message);
        return;
      }
      const call = this.calls.get(message.id);
      if (!call) return;
      this.calls.delete(message.id);
      if (message.ok) call.resolve(message.result);
      else call.reject(new Error(`${name}: ${message.error}`));
    });
    const keep = (chunk: Buffer) => {
      this.output = (this.output + chunk.toString()).slice(-8192);
    };
    process.stdout?.on('data', keep);
    process.stderr?.on('data', keep);
    this.exited = new Promise((resolve) => {
      process.on('exit', (code) => {
        for (const call of this.calls.values()) call.reject(new Error(`${name} exited (${code}) during a call:\n${this.output}`));
        this.calls.clear();
        resolve(code);
      });
    });
  }

  get pid(): number {
    return this.process.pid!;
  }

  /** The last few KB the child wrote to stdout/stderr, for error messages. */
  recentOutput(): string {
    return this.output;
  }

  call<T>(cmd: string, args: unknown = {}): Promise<T> {
    if (this.process.exitCode !== null) return Promise.reject(new Error(`${this.name} has exited:\n${this.output}`));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.calls.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.process.send({ id, cmd, args } satisfies Call);
    });
  }

  /** SIGTERM (the children close cleanly on it), SIGKILL after `graceMs`. */
  async stop(graceMs = 10_000): Promise<number | null> {
    if (this.process.exitCode === null && this.process.signalCode === null) {
      this.process.kill('SIGTERM');
      const timer = setTimeout(() => this.process.kill('SIGKILL'), graceMs);
      const code = await this.exited;
      clearTimeout(timer);
      return code;
    }
    return this.exited;
  }

  whenExited(): Promise<number | null> {
    return this.exited;
  }
}

export interface ForkOptions {
  args?: string[];
  env?: NodeJS.ProcessEnv;
  /** Node flags for the child (`--expose-gc`, `--cpu-prof`); the orchestrator's own are not inherited. */
  execArgv?: string[];
  onEvent?: (event: ChildEvent) => void;
}

/** Fork a compiled bench child (see build.ts). */
export function forkChild(file: string, name: string, options: ForkOptions = {}): Child {
  const child = fork(file, options.args ?? [], {
    env: options.env,
    execArgv: options.execArgv ?? [],
    serialization: 'advanced',
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  return new Child(child, name, options.onEvent);
}

export type Handlers = Record<string, (args: never) => unknown>;

/** In a child: answer the parent's calls with `handlers`; a throw becomes a failed reply. */
export function serveCalls(handlers: Handlers): void {
  process.on('message', async (message: Call) => {
    const handler = handlers[message.cmd] as ((args: unknown) => unknown) | undefined;
    try {
      if (!handler) throw new Error(`unknown command ${message.cmd}`);
      const result = await handler(message.args);
      process.send!({ id: message.id, ok: true, result } satisfies Reply);
    } catch (err) {
      process.send!({ id: message.id, ok: false, error: err instanceof Error ? (err.stack ?? err.message) : String(err) } satisfies Reply);
    }
  });
  // Without a parent there is nothing to serve.
  process.on('disconnect', () => process.exit(0));
}

/** In a child: tell the parent something happened. */
export function sendEvent(event: ChildEvent): void {
  process.send?.(event);
}
