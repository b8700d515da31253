import type { Adapter, AdapterPayload } from 'oidc-provider';

type Entry = { model: string; id: string; payload: AdapterPayload; expiresAt: number };

/**
 * oidc-provider's storage for one environment, in memory, searchable by account: sessions,
 * interactions, grants, codes and tokens are indexed by `accountId` and `grantId`, so that
 * suspending an account can destroy everything issued to it. (oidc-provider's own
 * MemoryAdapter is an LRU that cannot be searched.) Expired entries are dropped on access
 * and swept now and then.
 */
export class SearchableMemoryStore {
  readonly #entries = new Map<string, Entry>();
  readonly #byAccount = new Map<string, Set<string>>();
  readonly #byGrant = new Map<string, Set<string>>();
  readonly #byUid = new Map<string, string>();
  readonly #byUserCode = new Map<string, string>();
  #lastSweep = Date.now();

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
    const expiresAt = expiresIn === undefined ? Infinity : Date.now() + expiresIn * 1000;
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
    if (entry !== undefined) entry.payload.consumed = Math.floor(Date.now() / 1000);
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
    if (entry === undefined || entry.expiresAt > Date.now()) return entry;
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
    const now = Date.now();
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
