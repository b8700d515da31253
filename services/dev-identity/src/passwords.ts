import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

// scrypt with the cost Node recommends for interactive logins (N=2^14, r=8, p=1): this is the
// identity side, hashing on registration and sign-in only, never on the gateway's hot path.
const cost = { N: 16384, r: 8, p: 1 } as const;
const keyLength = 32;
const format = /^scrypt\$(\d+)\$(\d+)\$(\d+)\$([A-Za-z0-9_-]+)\$([A-Za-z0-9_-]+)$/;

export const minimumPasswordLength = 8;
const maximumPasswordLength = 1024;

/** The rule for a new password, shown beside its field before anything is submitted. */
export const passwordRule = `At least ${minimumPasswordLength} characters.`;

/**
 * Why a new password is refused, and which field of the form it concerns: the new password
 * itself or its repetition.
 */
export type PasswordProblem = { field: 'password' | 'confirmation'; message: string };

/** Why a new password is refused, or undefined when it is acceptable. */
export function newPasswordProblem(
  password: string,
  confirmation: string,
): PasswordProblem | undefined {
  if (password.length < minimumPasswordLength) {
    return {
      field: 'password',
      message: `The password needs at least ${minimumPasswordLength} characters.`,
    };
  }
  if (password.length > maximumPasswordLength) {
    return {
      field: 'password',
      message: `The password can have at most ${maximumPasswordLength} characters.`,
    };
  }
  if (password !== confirmation) {
    return { field: 'confirmation', message: 'The two passwords are not the same.' };
  }
  return undefined;
}

/** `scrypt$N$r$p$<salt>$<hash>` (base64url), with a fresh 16-byte salt. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await deriveKey(password, salt, keyLength, cost);
  return `scrypt$${cost.N}$${cost.r}$${cost.p}$${salt.toString('base64url')}$${hash.toString('base64url')}`;
}

export function isPasswordHash(value: string): boolean {
  return format.test(value);
}

/** Compares in constant time; false for a malformed hash. */
export async function verifyPassword(password: string, passwordHash: string): Promise<boolean> {
  const match = format.exec(passwordHash);
  if (match === null) return false;
  const [, N, r, p, salt = '', hash = ''] = match;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await deriveKey(password, Buffer.from(salt, 'base64url'), expected.length, {
    N: Number(N),
    r: Number(r),
    p: Number(p),
  });
  return timingSafeEqual(actual, expected);
}

/**
 * Spends the time of one verification, so an unknown e-mail address answers as slowly as a
 * wrong password.
 */
export async function verifyNoPassword(password: string): Promise<false> {
  await deriveKey(password, dummySalt, keyLength, cost);
  return false;
}

const dummySalt = randomBytes(16);

function deriveKey(
  password: string,
  salt: Buffer,
  length: number,
  options: ScryptOptions,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, length, options, (error, key) => {
      if (error === null) resolve(key);
      else reject(error);
    });
  });
}
