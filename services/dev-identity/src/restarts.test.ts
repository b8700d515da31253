import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { JWK } from 'jose';
import type { DevAccount } from './dev-identity-options.js';
import { createJsonFileStore } from './json-file-store.js';
import {
  Browser,
  signInAndExchange,
  startAuthorization,
  startDevIdentity,
  submitAndFollow,
} from './testing/dev-identity-harness.js';

let dataDir: string;
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'dev-identity-'));
});
afterAll(() => rm(dataDir, { recursive: true, force: true }));

async function publishedKeys(issuer: string): Promise<unknown[]> {
  const response = await fetch(`${issuer}/jwks`);
  return ((await response.json()) as { keys: unknown[] }).keys;
}

describe('across restarts', () => {
  it('keeps the signing keys, registrations and suspensions in the stores', async () => {
    const keyStore = createJsonFileStore<JWK>(join(dataDir, 'signing-keys.json'));
    const accountStore = createJsonFileStore<DevAccount>(join(dataDir, 'accounts.json'));

    const first = await startDevIdentity({ keyStore, accountStore });
    const firstKeys = await publishedKeys(first.issuer('PROD'));
    const browser = new Browser();
    const started = await startAuthorization(browser, {
      issuer: first.issuer('PROD'),
      extra: { screen_hint: 'signup' },
    });
    await submitAndFollow(
      browser,
      { url: started.url, page: await started.response.text(), redirectUri: started.redirectUri },
      'register',
      {
        email: 'frank@example.com',
        password: 'frank-password',
        passwordConfirmation: 'frank-password',
      },
    );
    const firstAccounts = first.service.accounts('PROD');
    await first.close();

    // The files hold private keys and password hashes: owner only, no plain passwords.
    expect((await stat(join(dataDir, 'signing-keys.json'))).mode & 0o777).toBe(0o600);
    expect(await readFile(join(dataDir, 'accounts.json'), 'utf8')).not.toMatch(/-password"/);

    const second = await startDevIdentity({ keyStore, accountStore });
    try {
      expect(await publishedKeys(second.issuer('PROD'))).toEqual(firstKeys);
      expect(second.service.accounts('PROD')).toEqual(firstAccounts);
      const { tokens } = await signInAndExchange({
        issuer: second.issuer('PROD'),
        email: 'frank@example.com',
        password: 'frank-password',
      });
      expect(tokens.id_token).toEqual(expect.any(String));
    } finally {
      await second.close();
    }
  });

  it('creates a new key pair when there is no key store', async () => {
    const one = await startDevIdentity();
    const two = await startDevIdentity();
    try {
      expect(await publishedKeys(one.issuer('PROD'))).not.toEqual(
        await publishedKeys(two.issuer('PROD')),
      );
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });

  it('gives seed accounts without a subject the same subject at every start', async () => {
    const one = await startDevIdentity();
    const two = await startDevIdentity();
    try {
      expect(one.service.accounts('PROD')).toEqual(two.service.accounts('PROD'));
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });
});
