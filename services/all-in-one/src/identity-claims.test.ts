import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startGatewayUnderTest, type GatewayUnderTest } from './testing/gateway-under-test.js';
import { handoffCodeOf, loginSteps, type IssuedKey } from './testing/login-steps.js';

// Spec 2.5 JIT: an HTTPS `picture` fills an empty profile avatarUrl and `name` an unset
// metadata.displayName; what is already there is kept.
let t: GatewayUnderTest;
let key: IssuedKey;

beforeAll(async () => {
  t = await startGatewayUnderTest(
    {},
    {
      accounts: [
        {
          accountId: 'user-1',
          email: 'ada@example.test',
          emailVerified: true,
          name: 'Ada',
          picture: 'https://img.example.test/ada.png',
        },
        {
          accountId: 'user-2',
          email: 'bob@example.test',
          emailVerified: false,
          name: 'Bob',
          picture: 'http://img.example.test/bob.png',
        },
      ],
    },
  );
  const created = await t.call('POST', '/v1/platforms', {
    body: {
      platformKey: 'SHOP',
      displayName: 'Shop',
      redirectPairs: [
        {
          label: 'web',
          returnUrl: 'http://localhost:3000/',
          callbackUrl: 'http://localhost:3000/cb',
          isDefault: true,
        },
      ],
    },
  });
  key = (created.body.credentials as IssuedKey[])[0] as IssuedKey;
});

afterAll(async () => {
  await t.close();
});

async function signInAs(accountId: string) {
  const steps = loginSteps(t);
  const start = await steps.browserGet('/v1/auth/start?platformKey=SHOP&returnTo=%2F');
  const callback = await t.provider.browser().signIn(start.location ?? '', accountId);
  const landed = await steps.browserGet(`/v1/auth/callback${callback.search}`);
  if (landed.status !== 302) throw new Error(`callback answered ${landed.status}: ${landed.text}`);
  return steps.exchange(key, handoffCodeOf(landed.location));
}

const profileOf = async (userId: string) =>
  (await t.db.knex('onboarding.profiles').where({ user_id: userId }).first()) as
    { avatar_url: string | null; metadata: Record<string, unknown> } | undefined;

describe('identity claims at login', () => {
  it('copies an HTTPS picture into the avatar and the name into displayName, and reports the picture', async () => {
    const { body } = await signInAs('user-1');
    const user = body.user as { id: string; picture?: string };
    expect(user.picture).toBe('https://img.example.test/ada.png');
    expect(await profileOf(user.id)).toMatchObject({
      avatar_url: 'https://img.example.test/ada.png',
      metadata: { displayName: 'Ada' },
    });
  });

  it('never copies an http picture', async () => {
    const { body } = await signInAs('user-2');
    const user = body.user as { id: string; picture?: string };
    expect(user.picture).toBeUndefined();
    expect(await profileOf(user.id)).toMatchObject({
      avatar_url: null,
      metadata: { displayName: 'Bob' },
    });
  });

  it('keeps an avatar and a display name that are already set', async () => {
    const first = await signInAs('user-1');
    const userId = (first.body.user as { id: string }).id;
    await t.db
      .knex('onboarding.profiles')
      .where({ user_id: userId })
      .update({
        avatar_url: 'https://img.example.test/chosen.png',
        metadata: JSON.stringify({ displayName: 'Countess' }),
      });
    await signInAs('user-1');
    expect(await profileOf(userId)).toMatchObject({
      avatar_url: 'https://img.example.test/chosen.png',
      metadata: { displayName: 'Countess' },
    });
  });
});
