/**
 * The entry point (`npm start`): parse the flags (refusing to start on a bad one, exit 1),
 * start the server, say where the admin kubeconfig is and one kubectl command to try, and
 * close cleanly on SIGINT/SIGTERM (a second signal exits at once).
 */
import path from 'node:path';
import { type ServerConfig, parseFlags } from './flags';
import { UPSTREAM_VENDOR } from '../naming';
import { startServer } from './index';
import { type Logger, createLogger } from './logging';

/** Text until the flags are read; then the format and verbosity they ask for. */
let logger: Logger = createLogger({ format: 'text', verbosity: 0 });

function log(line: string): void {
  logger.info(line);
}

async function main(): Promise<number> {
  const parsed = parseFlags(process.argv.slice(2));
  if (parsed.kind === 'help') {
    process.stdout.write(parsed.text);
    return 0;
  }
  if (parsed.kind === 'error') {
    process.stderr.write(`Error: ${parsed.error.message}\nRun with --help for the list of flags.\n`);
    return 1;
  }
  const config = parsed.config;
  logger = createLogger({ format: config.loggingFormat, verbosity: config.verbosity });
  // A promise some request path forgot to handle is a bug to log, not a reason to stop serving everyone else.
  process.on('unhandledRejection', (reason) => log(`unhandled rejection: ${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}`));
  // Listen for signals from the start, so a stop during start-up also closes cleanly.
  const stopped = new Promise<NodeJS.Signals>((resolve) => {
    let signalled = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (signalled) process.exit(1);
      signalled = true;
      resolve(signal);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });

  if (config.controllersOnly) return runControllersOnly(config, stopped);
  const store = config.coreAddress
    ? `remote core ${config.coreAddress}`
    : config.etcdServers
      ? `etcd ${config.etcdServers.join(',')}`
      : `embedded store in ${config.dataDir}`;
  const server = await startServer(config, { log, logger, waitForReady: false });
  if (config.coreOnly) log(`serving the ${config.vendor} core over gRPC only on ${server.grpcAddress ?? '?'}, ${store}`);
  else log(`serving ${config.vendor} API on ${server.url} (port ${server.port}), ${store}`);
  const kubeconfig = path.relative(process.cwd(), server.kubeconfigPath) || server.kubeconfigPath;
  const shown = kubeconfig.startsWith('..') ? server.kubeconfigPath : `./${kubeconfig}`;
  log(`admin kubeconfig: ${shown}`);
  log(`try: kubectl --kubeconfig ${shown} get namespaces`);
  if (config.vendor === UPSTREAM_VENDOR) {
    log(`every kubectl command works against this naming profile (--vendor ${UPSTREAM_VENDOR}: upstream names)`);
  } else {
    // kubectl's generator commands build requests with upstream's group names and media types.
    log(
      `in the ${config.vendor} profile kubectl's discovery-driven commands work (get, describe, delete, edit, apply -f, create -f, scale, wait, get --raw); its generator commands (create namespace|configmap|secret|role|rolebinding|clusterrole|clusterrolebinding|token) and auth can-i send upstream group names or upstream's protobuf: start with --vendor ${UPSTREAM_VENDOR} for those`,
    );
  }
  server.ready.then(
    () => log('ready'),
    () => {},
  );

  const signal = await stopped;
  log(`${signal}: shutting down`);
  try {
    await server.close();
  } catch (err) {
    process.stderr.write(`keelson: error while closing: ${String(err)}\n`);
  }
  return 0;
}

/** `--controllers-only`: the controllers as clients of the core at `--core-address`, until a signal. */
async function runControllersOnly(config: ServerConfig, stopped: Promise<NodeJS.Signals>): Promise<number> {
  // Nothing else may hold the event loop: a standby's only work is a timer the clock does not keep alive.
  const alive = setInterval(() => {}, 1 << 30);
  // Required here, not imported: it brings grpc-js (~30 ms of the start, ~4 MB of RSS), which
  // a server without a gRPC door never loads (docs/BENCHMARKS.md, "What the mechanisms save").
  const { startControllerProcess } = require('./controller-process') as typeof import('./controller-process');
  const running = await startControllerProcess(config, { log });
  log(`running controllers against the core at ${config.coreAddress} as the user of ${config.kubeconfig}`);
  const failed = running.ready.then(
    () => {
      log('ready');
      return new Promise<never>(() => {});
    },
    (err: unknown) => err as Error,
  );
  const outcome = await Promise.race([stopped, failed]);
  await running.close().catch((err: unknown) => log(`error while closing: ${String(err)}`));
  clearInterval(alive);
  if (outcome instanceof Error) {
    log(`the controllers failed to start: ${outcome.message}`);
    return 1;
  }
  log(`${outcome}: shutting down`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`Error: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
