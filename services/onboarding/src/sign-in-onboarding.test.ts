// Spec 2.5, 3.6, 3.7, 4.2 step 6: what the onboarding service does at every
// sign-in (bootstrapMembership with the ID token's claims in the callback; applyIdentityClaims
// alone for its other callers; evaluateOnboarding by the platform), on real PostgreSQL and on
// PGlite. A returning user's sign-in costs one statement per call and writes nothing; the
// answers still follow every change made between two sign-ins: values saved by the user,
// schema changes by this process or by another one.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  onboardingHarnesses,
  type OnboardingHarness,
  type OnboardingInstance,
} from './testing/onboarding-harness.js';

const PICTURE = 'https://images.example.test/ann.png';

/** A statement that opens or ends a transaction. */
const isTransactionControl = (sql: string): boolean => /^(begin|commit|rollback)\b/i.test(sql);

describe.each(onboardingHarnesses)('onboarding at sign-in on $name', (harness) => {
  let data: OnboardingHarness;
  let gateway: OnboardingInstance;
  /** Another onboarding process on the same data (split mode with two instances). */
  let other: OnboardingInstance;

  beforeAll(async () => {
    data = await harness.open();
    gateway = await data.instance();
    other = await data.instance();
  });
  afterAll(async () => {
    await data?.close();
  });

  const newPlatform = () => `APP_${randomUUID().slice(0, 8).toUpperCase()}`;

  /** The onboarding call of a sign-in callback, then an evaluation as a platform asks it. */
  async function signIn(
    userId: string,
    platformKey: string,
    on: OnboardingInstance = gateway,
    identityClaims: { picture?: string; name?: string } = {
      picture: PICTURE,
      name: 'Ann Example',
    },
  ) {
    const { status: callback } = await on.onboarding.bootstrapMembership({
      userId,
      platformKey,
      identityClaims,
    });
    const { status: exchange } = await on.onboarding.evaluateOnboarding({ userId, platformKey });
    return { callback, exchange };
  }

  async function requiredPlatformField(on: OnboardingInstance, platformKey: string, key: string) {
    await on.onboarding.createPlatformField({
      platformKey,
      definition: {
        fieldKey: key,
        label: 'Membership number',
        fieldType: 'TEXT',
        source: 'CUSTOM_FIELD',
        required: true,
      },
    });
  }

  describe('identity claims (spec 2.5)', () => {
    it('fills an empty avatar and display name at the first sign-in and writes nothing at the next', async () => {
      const userId = randomUUID();
      const first = await gateway.onboarding.applyIdentityClaims({
        userId,
        picture: PICTURE,
        name: '  Ann Example ',
      });
      expect(first.avatarUrl).toBe(PICTURE);
      const { profile: created } = await gateway.profiles.getProfile({ userId });
      expect(created?.avatarUrl).toBe(PICTURE);
      expect(created?.metadata).toEqual({ displayName: 'Ann Example' });
      expect(created?.updatedAt).toBeDefined();

      const { answer, statements } = await gateway.statementsOf(() =>
        gateway.onboarding.applyIdentityClaims({ userId, picture: PICTURE, name: 'Ann Example' }),
      );
      expect(answer.avatarUrl).toBe(PICTURE);
      expect(statements).toHaveLength(1);
      const { profile: after } = await gateway.profiles.getProfile({ userId });
      expect(after?.updatedAt).toBe(created?.updatedAt);
    });

    it('keeps what the user chose between two sign-ins, and fills again an avatar the user removed', async () => {
      const userId = randomUUID();
      await gateway.onboarding.applyIdentityClaims({ userId, picture: PICTURE, name: 'Ann' });
      await gateway.profiles.patchProfile({
        userId,
        patch: { metadata: { displayName: 'Annie' }, avatarUrl: null },
      });
      const { profile: chosen } = await gateway.profiles.getProfile({ userId });
      expect(chosen?.avatarUrl).toBeUndefined();

      const next = await gateway.onboarding.applyIdentityClaims({
        userId,
        picture: 'https://images.example.test/new.png',
        name: 'Ann Other',
      });
      expect(next.avatarUrl).toBe('https://images.example.test/new.png');
      const { profile } = await gateway.profiles.getProfile({ userId });
      expect(profile?.avatarUrl).toBe('https://images.example.test/new.png');
      expect(profile?.metadata).toEqual({ displayName: 'Annie' });
    });

    it('creates the profile on first use without claims, ignores a non-HTTPS picture, and writes nothing later', async () => {
      const userId = randomUUID();
      const first = await gateway.onboarding.applyIdentityClaims({
        userId,
        picture: 'http://images.example.test/ann.png',
      });
      expect(first.avatarUrl).toBeUndefined();
      const { profile: created } = await gateway.profiles.getProfile({ userId });
      expect(created?.updatedAt).toBeDefined();
      expect(created?.avatarUrl).toBeUndefined();
      expect(created?.metadata).toEqual({});

      const { statements } = await gateway.statementsOf(() =>
        gateway.onboarding.applyIdentityClaims({ userId }),
      );
      expect(statements).toHaveLength(1);
      const { profile: after } = await gateway.profiles.getProfile({ userId });
      expect(after?.updatedAt).toBe(created?.updatedAt);

      // A name arriving at a later sign-in still fills the unset display name.
      await gateway.onboarding.applyIdentityClaims({ userId, name: 'Ann' });
      const { profile: named } = await gateway.profiles.getProfile({ userId });
      expect(named?.metadata).toEqual({ displayName: 'Ann' });
    });
  });

  describe('identity claims with the membership bootstrap (spec 2.5, 4.2 step 6)', () => {
    it('fills the avatar and display name at the first sign-in in the bootstrap call, and a returning sign-in is one statement that writes nothing', async () => {
      const userId = randomUUID();
      const platformKey = newPlatform();
      await requiredPlatformField(gateway, platformKey, 'memberNo');
      const first = await gateway.onboarding.bootstrapMembership({
        userId,
        platformKey,
        identityClaims: { picture: PICTURE, name: '  Ann Example ' },
      });
      expect(first.status).toMatchObject({
        globalStatus: 'COMPLETE',
        platformStatus: 'NOT_STARTED',
        platformMissingFields: ['memberNo'],
      });
      const { profile: created } = await gateway.profiles.getProfile({ userId });
      expect(created?.avatarUrl).toBe(PICTURE);
      expect(created?.metadata).toEqual({ displayName: 'Ann Example' });

      const again = await gateway.statementsOf(() =>
        gateway.onboarding.bootstrapMembership({
          userId,
          platformKey,
          identityClaims: { picture: 'https://images.example.test/other.png', name: 'Other' },
        }),
      );
      expect(again.statements).toHaveLength(1);
      expect(again.answer.status).toEqual(first.status);
      const { profile: after } = await gateway.profiles.getProfile({ userId });
      expect(after).toEqual(created);
    });

    it('fills what the user emptied since, keeps what the user chose, and ignores a non-HTTPS picture', async () => {
      const userId = randomUUID();
      const platformKey = newPlatform();
      await signIn(userId, platformKey, gateway, { picture: PICTURE, name: 'Ann' });
      await gateway.profiles.patchProfile({
        userId,
        patch: { metadata: { displayName: 'Annie' }, avatarUrl: null },
      });
      await signIn(userId, platformKey, gateway, {
        picture: 'http://images.example.test/plain.png',
        name: 'Ann Other',
      });
      const { profile: kept } = await gateway.profiles.getProfile({ userId });
      expect(kept?.avatarUrl).toBeUndefined();
      expect(kept?.metadata).toEqual({ displayName: 'Annie' });

      await signIn(userId, platformKey, gateway, { picture: 'https://images.example.test/n.png' });
      const { profile } = await gateway.profiles.getProfile({ userId });
      expect(profile?.avatarUrl).toBe('https://images.example.test/n.png');
      expect(profile?.metadata).toEqual({ displayName: 'Annie' });
    });

    it('creates the profile at a sign-in without picture or name, and applies nothing without claims', async () => {
      const withoutClaims = randomUUID();
      const platformKey = newPlatform();
      await gateway.onboarding.bootstrapMembership({ userId: withoutClaims, platformKey });
      const { profile: none } = await gateway.profiles.getProfile({ userId: withoutClaims });
      expect(none?.updatedAt).toBeUndefined();

      const emptyClaims = randomUUID();
      await gateway.onboarding.bootstrapMembership({
        userId: emptyClaims,
        platformKey,
        identityClaims: {},
      });
      const { profile: created } = await gateway.profiles.getProfile({ userId: emptyClaims });
      expect(created?.updatedAt).toBeDefined();
      expect(created?.avatarUrl).toBeUndefined();
      expect(created?.metadata).toEqual({});
    });

    it('applies the claims once when another instance changed the schema (the read runs twice)', async () => {
      const userId = randomUUID();
      const platformKey = newPlatform();
      await signIn(userId, platformKey, gateway, {});
      await requiredPlatformField(other, platformKey, 'memberNo');
      const { answer, statements } = await gateway.statementsOf(() =>
        gateway.onboarding.bootstrapMembership({
          userId,
          platformKey,
          identityClaims: { picture: PICTURE, name: 'Ann' },
        }),
      );
      expect(statements).toHaveLength(2);
      expect(
        statements.filter((sql) => sql.includes('insert into onboarding.profiles')),
      ).toHaveLength(1);
      expect(answer.status).toMatchObject({
        platformStatus: 'IN_PROGRESS',
        platformMissingFields: ['memberNo'],
      });
      const { profile } = await gateway.profiles.getProfile({ userId });
      expect(profile?.avatarUrl).toBe(PICTURE);
      expect(profile?.metadata).toEqual({ displayName: 'Ann' });
    });
  });

  describe('membership bootstrap (spec 3.7, 4.2 step 6)', () => {
    it('records COMPLETE at the first sign-in when nothing is required, and keeps it as it was at the next', async () => {
      const userId = randomUUID();
      const platformKey = newPlatform();
      const first = await signIn(userId, platformKey);
      expect(first.callback).toMatchObject({
        globalStatus: 'COMPLETE',
        platformStatus: 'COMPLETE',
        platformMissingFields: [],
        requirementVersion: 0,
      });
      expect(first.callback?.completedAt).toBeDefined();
      expect(first.exchange).toEqual(first.callback);

      const second = await signIn(userId, platformKey);
      expect(second.callback).toEqual(first.callback);
      expect(second.exchange).toEqual(first.callback);
    });

    it('a returning user’s sign-in is one statement per call, without a transaction', async () => {
      const userId = randomUUID();
      const platformKey = newPlatform();
      await requiredPlatformField(gateway, platformKey, 'memberNo');
      await signIn(userId, platformKey);

      const claims = await gateway.statementsOf(() =>
        gateway.onboarding.applyIdentityClaims({ userId, picture: PICTURE, name: 'Ann' }),
      );
      const bootstrap = await gateway.statementsOf(() =>
        gateway.onboarding.bootstrapMembership({
          userId,
          platformKey,
          identityClaims: { picture: PICTURE, name: 'Ann' },
        }),
      );
      const evaluation = await gateway.statementsOf(() =>
        gateway.onboarding.evaluateOnboarding({ userId, platformKey }),
      );
      for (const call of [claims, bootstrap, evaluation]) {
        expect(call.statements).toHaveLength(1);
        expect(call.statements.filter(isTransactionControl)).toEqual([]);
      }
      expect(bootstrap.answer.status).toMatchObject({
        platformStatus: 'NOT_STARTED',
        platformMissingFields: ['memberNo'],
      });
      expect(evaluation.answer.status).toEqual(bootstrap.answer.status);

      // This process's own schema change dropped what it kept: still one statement after it.
      await gateway.onboarding.archivePlatformField({ platformKey, fieldKey: 'memberNo' });
      const afterChange = await gateway.statementsOf(() =>
        gateway.onboarding.evaluateOnboarding({ userId, platformKey }),
      );
      expect(afterChange.statements).toHaveLength(1);
      expect(afterChange.answer.status).toMatchObject({
        platformMissingFields: [],
        requirementVersion: 2,
      });
    });

    it('sees a value the user saved between two sign-ins and records COMPLETE', async () => {
      const userId = randomUUID();
      const platformKey = newPlatform();
      await requiredPlatformField(gateway, platformKey, 'memberNo');
      const first = await signIn(userId, platformKey);
      expect(first.callback).toMatchObject({
        platformStatus: 'NOT_STARTED',
        platformMissingFields: ['memberNo'],
        requirementVersion: 1,
      });
      expect(first.callback?.completedAt).toBeUndefined();

      const saved = await gateway.onboarding.putValues({
        userId,
        platformKey,
        values: { memberNo: 'M1234' },
      });
      expect(saved.status).toMatchObject({ platformStatus: 'IN_PROGRESS' });

      const second = await signIn(userId, platformKey);
      expect(second.callback).toMatchObject({
        platformStatus: 'COMPLETE',
        platformMissingFields: [],
        requirementVersion: 1,
      });
      expect(second.callback?.completedAt).toBeDefined();
      expect(second.exchange).toEqual(second.callback);
    });

    it('sees a required global value saved through the profile between two sign-ins', async () => {
      const userId = randomUUID();
      const platformKey = newPlatform();
      await gateway.onboarding.createGlobalField({
        definition: {
          profileFieldKey: 'nickname',
          label: 'Nickname',
          fieldType: 'TEXT',
          required: true,
        },
      });
      try {
        const first = await signIn(userId, platformKey);
        expect(first.callback).toMatchObject({
          globalStatus: 'INCOMPLETE',
          globalMissingFields: ['nickname'],
          platformStatus: 'NOT_STARTED',
        });
        await gateway.profiles.patchProfile({ userId, patch: { nickname: 'annie' } });
        const second = await signIn(userId, platformKey);
        expect(second.callback).toMatchObject({
          globalStatus: 'COMPLETE',
          globalMissingFields: [],
          platformStatus: 'COMPLETE',
        });
        expect(second.exchange).toEqual(second.callback);
      } finally {
        await gateway.onboarding.archiveGlobalField({ profileFieldKey: 'nickname' });
      }
    });

    it('reopens after a schema change of this process between two sign-ins, and completes again once the field is archived', async () => {
      const userId = randomUUID();
      const platformKey = newPlatform();
      const first = await signIn(userId, platformKey);
      expect(first.callback).toMatchObject({ platformStatus: 'COMPLETE', requirementVersion: 0 });

      await requiredPlatformField(gateway, platformKey, 'memberNo');
      const reopened = await signIn(userId, platformKey);
      expect(reopened.callback).toMatchObject({
        platformStatus: 'IN_PROGRESS',
        platformMissingFields: ['memberNo'],
        requirementVersion: 1,
      });
      expect(reopened.callback?.completedAt).toBeUndefined();
      expect(reopened.exchange).toEqual(reopened.callback);

      await gateway.onboarding.archivePlatformField({ platformKey, fieldKey: 'memberNo' });
      const completed = await signIn(userId, platformKey);
      expect(completed.callback).toMatchObject({
        platformStatus: 'COMPLETE',
        platformMissingFields: [],
        requirementVersion: 2,
      });
      expect(completed.callback?.completedAt).toBeDefined();
      expect(completed.callback?.completedAt).not.toBe(first.callback?.completedAt);
    });

    it('sees at once a schema change made by another onboarding instance, whatever it keeps cached', async () => {
      const userId = randomUUID();
      const platformKey = newPlatform();
      // Both instances have read (and keep) the platform's schema at version 0.
      const first = await signIn(userId, platformKey, gateway);
      expect(first.callback).toMatchObject({ platformStatus: 'COMPLETE', requirementVersion: 0 });
      await other.onboarding.evaluateOnboarding({ userId, platformKey });

      await requiredPlatformField(other, platformKey, 'memberNo');
      const afterPlatformChange = await signIn(userId, platformKey, gateway);
      expect(afterPlatformChange.callback).toMatchObject({
        platformStatus: 'IN_PROGRESS',
        platformMissingFields: ['memberNo'],
        requirementVersion: 1,
      });
      expect(afterPlatformChange.exchange).toEqual(afterPlatformChange.callback);

      await other.onboarding.createGlobalField({
        definition: {
          profileFieldKey: 'timezone',
          label: 'Time zone',
          fieldType: 'TEXT',
          required: true,
        },
      });
      try {
        const afterGlobalChange = await gateway.onboarding.bootstrapMembership({
          userId,
          platformKey,
        });
        expect(afterGlobalChange.status).toMatchObject({
          globalStatus: 'INCOMPLETE',
          globalMissingFields: ['timezone'],
        });
        const { requirements } = await gateway.onboarding.getRequirements({
          userId,
          platformKey: '',
        });
        expect(requirements.map((r) => r.definition?.fieldKey)).toContain('timezone');
      } finally {
        await other.onboarding.archiveGlobalField({ profileFieldKey: 'timezone' });
      }
      const afterArchive = await gateway.onboarding.evaluateOnboarding({ userId, platformKey: '' });
      expect(afterArchive.status?.globalMissingFields).toEqual([]);
    });

    it('concurrent first sign-ins create one membership and all answer the same status', async () => {
      const userId = randomUUID();
      const platformKey = newPlatform();
      const answers = await Promise.all(
        Array.from({ length: 6 }, () =>
          gateway.onboarding.bootstrapMembership({ userId, platformKey }),
        ),
      );
      const completedAt = answers.map((answer) => answer.status?.completedAt);
      expect(answers.map((answer) => answer.status?.platformStatus)).toEqual(
        Array(6).fill('COMPLETE'),
      );
      expect(new Set(completedAt).size).toBe(1);
      const { status } = await gateway.onboarding.evaluateOnboarding({ userId, platformKey });
      expect(status?.completedAt).toBe(completedAt[0]);
    });

    it('complete refuses with the missing fields and creates nothing', async () => {
      const userId = randomUUID();
      const platformKey = newPlatform();
      await requiredPlatformField(gateway, platformKey, 'memberNo');
      await expect(
        gateway.onboarding.completeOnboarding({ userId, platformKey }),
      ).rejects.toMatchObject({ rawMessage: 'Required onboarding fields are missing.' });
      const { status } = await gateway.onboarding.evaluateOnboarding({ userId, platformKey });
      expect(status).toMatchObject({
        platformStatus: 'NOT_STARTED',
        platformMissingFields: ['memberNo'],
      });
    });
  });

  it('a change that did not move the requirementVersion shows once the cache TTL ran out', async () => {
    const shortLived = await data.instance({ schemaCacheTtlMs: 200 });
    const userId = randomUUID();
    const platformKey = newPlatform();
    await shortLived.onboarding.createPlatformField({
      platformKey,
      definition: {
        fieldKey: 'memberNo',
        label: 'Membership number',
        fieldType: 'TEXT',
        source: 'CUSTOM_FIELD',
        required: false,
      },
    });
    const before = await shortLived.onboarding.evaluateOnboarding({ userId, platformKey });
    expect(before.status?.platformMissingFields).toEqual([]);
    // A hand edit in SQL: the definition changes, the version does not.
    await shortLived.db.knex.raw(
      `update onboarding.field_definitions
       set definition = jsonb_set(definition, '{required}', 'true') where platform_key = ?`,
      [platformKey],
    );
    await new Promise((resolve) => setTimeout(resolve, 250));
    const after = await shortLived.onboarding.evaluateOnboarding({ userId, platformKey });
    expect(after.status?.platformMissingFields).toEqual(['memberNo']);
    expect(after.status?.requirementVersion).toBe(1);
  });
});
