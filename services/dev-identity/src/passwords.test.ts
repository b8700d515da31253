import { describe, expect, it } from '@jest/globals';
import { hashPassword, isPasswordHash, newPasswordProblem, verifyPassword } from './passwords.js';

describe('passwords', () => {
  it('hashes with scrypt and a fresh salt, and verifies', async () => {
    const one = await hashPassword('correct horse');
    const two = await hashPassword('correct horse');
    expect(one).toMatch(/^scrypt\$16384\$8\$1\$[\w-]+\$[\w-]+$/);
    expect(one).not.toBe(two);
    expect(isPasswordHash(one)).toBe(true);
    expect(await verifyPassword('correct horse', one)).toBe(true);
    expect(await verifyPassword('correct horsE', one)).toBe(false);
    expect(await verifyPassword('correct horse', 'plain-text')).toBe(false);
  });

  it('states what is wrong with a new password, and in which field', () => {
    expect(newPasswordProblem('short', 'short')).toEqual({
      field: 'password',
      message: 'The password needs at least 8 characters.',
    });
    expect(newPasswordProblem('x'.repeat(1025), 'x'.repeat(1025))).toEqual({
      field: 'password',
      message: 'The password can have at most 1024 characters.',
    });
    expect(newPasswordProblem('long-enough', 'long-enougH')).toEqual({
      field: 'confirmation',
      message: 'The two passwords are not the same.',
    });
    expect(newPasswordProblem('long-enough', 'long-enough')).toBeUndefined();
  });
});
