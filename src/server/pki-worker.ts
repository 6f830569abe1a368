/**
 * The worker thread that makes the server's PKI (see `certificates.ts` for why a thread): it
 * runs the job in its `workerData`, posts the result or the error, and ends.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { type PkiJob, makePki } from './certificates';

makePki(workerData as PkiJob).then(
  (made) => parentPort!.postMessage({ made }),
  (err: unknown) => parentPort!.postMessage({ error: err instanceof Error ? (err.stack ?? err.message) : String(err) }),
);
