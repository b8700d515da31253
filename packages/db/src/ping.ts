import type { Knex } from 'knex';
import { DatabaseUnavailableError, errorMessage } from './errors.js';

/**
 * Runs `select 1`; rejects with DatabaseUnavailableError when it fails or takes longer than
 * `timeoutMs`. The timer is always cleared, so a successful ping leaves nothing running.
 */
export async function pingDatabase(knex: Knex, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new DatabaseUnavailableError(`Database did not answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
  });
  const answered = knex.raw('select 1').then(() => undefined);
  try {
    await Promise.race([answered, timedOut]);
  } catch (error) {
    if (error instanceof DatabaseUnavailableError) throw error;
    throw new DatabaseUnavailableError(`Database ping failed: ${errorMessage(error)}`, {
      cause: error,
    });
  } finally {
    clearTimeout(timer);
  }
}
