import { describe, it, expect } from '@jest/globals';
import { asDatabaseError, DatabaseUnavailableError, isConnectionFailure } from './errors.js';

function withCode(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

describe('isConnectionFailure', () => {
  it('recognises unreachable servers, shutdowns, pool timeouts and missing databases', () => {
    expect(isConnectionFailure(withCode('connect ECONNREFUSED 127.0.0.1:1', 'ECONNREFUSED'))).toBe(
      true,
    );
    expect(isConnectionFailure(withCode('terminating connection', '57P01'))).toBe(true);
    expect(isConnectionFailure(withCode('database "x" does not exist', '3D000'))).toBe(true);
    expect(isConnectionFailure(new AggregateError([withCode('refused', 'ECONNREFUSED')]))).toBe(
      true,
    );
    const poolTimeout = Object.assign(new Error('Knex: Timeout acquiring a connection'), {
      name: 'KnexTimeoutError',
    });
    expect(isConnectionFailure(poolTimeout)).toBe(true);
    expect(isConnectionFailure(new Error('Connection terminated unexpectedly'))).toBe(true);
  });

  it('leaves failing SQL alone', () => {
    const missingTable = withCode('relation "x" does not exist', '42P01');
    expect(isConnectionFailure(missingTable)).toBe(false);
    expect(isConnectionFailure(withCode('duplicate key', '23505'))).toBe(false);
    expect(asDatabaseError(missingTable, 'reading')).toBe(missingTable);
  });

  it('wraps connection failures with the original as cause', () => {
    const refused = withCode('connect ECONNREFUSED 127.0.0.1:1', 'ECONNREFUSED');
    const wrapped = asDatabaseError(refused, 'migrating');
    expect(wrapped).toBeInstanceOf(DatabaseUnavailableError);
    expect(wrapped).toMatchObject({
      message: 'Database unavailable while migrating: connect ECONNREFUSED 127.0.0.1:1',
      cause: refused,
    });
  });
});
