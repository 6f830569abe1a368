/** The StatusError a promise rejects with; fails the test when it resolves or throws something else. */
import { StatusError } from '../../src/status';

export async function statusOf(p: Promise<unknown>): Promise<StatusError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof StatusError) return err;
    throw err;
  }
  throw new Error('expected a Status error');
}
