import type { Adapter, AdapterPayload } from 'oidc-provider';

type Entry = { model: string; id: string; payload: AdapterPayload; expiresAt: number };

/**
 * oidc-provider's storage for one provider, in memory, searchable by account: sessions,
 * interactions, grants, codes and tokens are indexed by `accountId` and `grantId`, so that
 * suspending an account can destroy everything issued to it. Entries are kept until their
 * lifetime ends (or the provider destroys or revokes them): expired ones are dropped on
 * access and swept now and then.
 *
 * Used by the development identity service and by the testkit's test provider. oidc-provider's
 * own development adapter is one LRU of 1,000 entries that cannot be searched: a sign-in
 * stores five or six (interaction, session, grant, authorization code...), so at about 100
 * sign-ins in flight it evicted codes before the relying party redeemed them, and the
 * provider answered `invalid_grant` ("grant request is invalid"), which looks like a
 * relying-party bug (the bench's 100 concurrent sign-ins did exactly that).
 */
export class SearchableMemoryStore {
  readonly #entries = new Map<string, Entry>();
  readonly #byAccount = new Map<string, Set<string>>();
  readonly #byGrant = new Map<string, Set<string>>();
  readonly #byUid = new Map<string, string>();
  readonly #byUserCode = new Map<string, string>();
  readonly #now: () => number;
  #lastSweep: number;

  /** `now` is the clock in milliseconds (tests pass their own). */
  constructor(now: () => number = Date.now) {
    this.#now = now;
    this.#lastSweep = now();
  }

  /** The `adapter` option of oidc-provider: one adapter per model name. */
  readonly adapterFor = (model: string): Adapter => new ModelAdapter(this, model);

  /**
   * Destroys every session, interaction, grant, code and stored token of the account, and
   * every token that shares a grant with them. JWT access tokens are not stored: they stay
   * valid until they expire (10 minutes at most).
   */
  revokeAccount(accountId: string): number {
    const doomed = new Set(this.#byAccount.get(accountId));
    for (const key of [...doomed]) {
      const entry = this.#entries.get(key);
      const grantId = entry?.model === 'Grant' ? entry.id : entry?.payload.grantId;
      if (grantId !== undefined)
        this.#byGrant.get(grantId)?.forEach((member) => doomed.add(member));
    }
    doomed.forEach((key) => this.#delete(key));
    return doomed.size;
  }

  upsert(model: string, id: string, payload: AdapterPayload, expiresIn: number | undefined) {
    const key = entryKey(model, id);
    this.#delete(key);
    const expiresAt = expiresIn === undefined ? Infinity : this.#now() + expiresIn * 1000;
    this.#entries.set(key, { model, id, payload, expiresAt });
    const accountId = payload.accountId ?? payload.session?.accountId;
    if (accountId !== undefined) addTo(this.#byAccount, accountId, key);
    if (payload.grantId !== undefined) addTo(this.#byGrant, payload.grantId, key);
    if (model === 'Session' && payload.uid !== undefined) this.#byUid.set(payload.uid, key);
    if (payload.userCode !== undefined) this.#byUserCode.set(payload.userCode, key);
    this.#sweepNowAndThen();
  }

  find(model: string, id: string): AdapterPayload | undefined {
    return this.#live(entryKey(model, id))?.payload;
  }

  findByUid(uid: string): AdapterPayload | undefined {
    const key = this.#byUid.get(uid);
    return key === undefined ? undefined : this.#live(key)?.payload;
  }

  findByUserCode(userCode: string): AdapterPayload | undefined {
    const key = this.#byUserCode.get(userCode);
    return key === undefined ? undefined : this.#live(key)?.payload;
  }

  consume(model: string, id: string): void {
    const entry = this.#live(entryKey(model, id));
    if (entry !== undefined) entry.payload.consumed = Math.floor(this.#now() / 1000);
  }

  destroy(model: string, id: string): void {
    this.#delete(entryKey(model, id));
  }

  revokeByGrantId(model: string, grantId: string): void {
    for (const key of [...(this.#byGrant.get(grantId) ?? [])]) {
      if (this.#entries.get(key)?.model === model) this.#delete(key);
    }
  }

  #live(key: string): Entry | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined || entry.expiresAt > this.#now()) return entry;
    this.#delete(key);
    return undefined;
  }

  #delete(key: string): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    this.#entries.delete(key);
    const { payload } = entry;
    const accountId = payload.accountId ?? payload.session?.accountId;
    if (accountId !== undefined) removeFrom(this.#byAccount, accountId, key);
    if (payload.grantId !== undefined) removeFrom(this.#byGrant, payload.grantId, key);
    if (payload.uid !== undefined && this.#byUid.get(payload.uid) === key) {
      this.#byUid.delete(payload.uid);
    }
    if (payload.userCode !== undefined && this.#byUserCode.get(payload.userCode) === key) {
      this.#byUserCode.delete(payload.userCode);
    }
  }

  #sweepNowAndThen(): void {
    const now = this.#now();
    if (now - this.#lastSweep < 60_000) return;
    this.#lastSweep = now;
    for (const [key, entry] of this.#entries) {
      if (entry.expiresAt <= now) this.#delete(key);
    }
  }
}

class ModelAdapter implements Adapter {
  constructor(
    private readonly store: SearchableMemoryStore,
    private readonly model: string,
  ) {}

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    this.store.upsert(this.model, id, payload, expiresIn);
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    return this.store.find(this.model, id);
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    return this.store.findByUid(uid);
  }

  async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    return this.store.findByUserCode(userCode);
  }

  async consume(id: string): Promise<void> {
    this.store.consume(this.model, id);
  }

  async destroy(id: string): Promise<void> {
    this.store.destroy(this.model, id);
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    this.store.revokeByGrantId(this.model, grantId);
  }
}

/**
 * oidc-provider's models whose entries carry a grant id and go when their grant is revoked
 * (it calls `revokeByGrantId` on the adapter of each).
 */
export const grantableModels: ReadonlySet<string> = new Set([
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'DeviceCode',
  'BackchannelAuthenticationRequest',
]);

const entryKey = (model: string, id: string) => `${model}:${id}`;

function addTo(index: Map<string, Set<string>>, value: string, key: string): void {
  const keys = index.get(value);
  if (keys === undefined) index.set(value, new Set([key]));
  else keys.add(key);
}

function removeFrom(index: Map<string, Set<string>>, value: string, key: string): void {
  const keys = index.get(value);
  keys?.delete(key);
  if (keys?.size === 0) index.delete(value);
}
