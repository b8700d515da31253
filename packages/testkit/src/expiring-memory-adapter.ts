import type { Adapter, AdapterFactory, AdapterPayload } from 'oidc-provider';

/**
 * An in-memory storage for the test OpenID Provider that forgets an entry only when its
 * lifetime ends (or the provider destroys or revokes it).
 *
 * oidc-provider's own development adapter keeps everything in one LRU of 1,000 entries. A
 * sign-in stores five or six (interaction, session and its uid, grant, the grant's member
 * list, authorization code), so at about 100 sign-ins in flight an in-flight code can be
 * evicted before the relying party redeems it, and the provider answers `invalid_grant`
 * ("grant request is invalid"), which looks like a relying-party bug. The bench's 100
 * concurrent sign-ins did exactly that. Test providers live minutes, and their lifetimes
 * (`ttl` in test-openid-provider.ts) are at most ten minutes, so keeping everything until
 * it expires is bounded by the load a test offers.
 */
export function createExpiringMemoryAdapter(now: () => number = Date.now): AdapterFactory {
  const store = new ExpiringStore(now);
  return (model) => new ExpiringMemoryAdapter(model, store);
}

type Entry = { payload: AdapterPayload; expiresAt: number };

/** Entries older than their lifetime are dropped when read, and swept at most every 10 s. */
const sweepEveryMs = 10_000;

class ExpiringStore {
  readonly entries = new Map<string, Entry>();
  /** Session uid → session id; user code → device code id. */
  readonly uids = new Map<string, string>();
  readonly userCodes = new Map<string, string>();
  /** Grant id → keys of the tokens and codes issued under it (revoked together). */
  readonly grants = new Map<string, Set<string>>();
  private lastSweep: number;

  constructor(readonly now: () => number) {
    this.lastSweep = now();
  }

  get(key: string): AdapterPayload | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.delete(key);
      return undefined;
    }
    return entry.payload;
  }

  set(key: string, payload: AdapterPayload, expiresInSeconds: number | undefined): void {
    this.delete(key);
    const expiresAt =
      expiresInSeconds === undefined ? Infinity : this.now() + expiresInSeconds * 1000;
    this.entries.set(key, { payload, expiresAt });
    if (typeof payload.uid === 'string' && key.startsWith('Session:')) {
      this.uids.set(payload.uid, idOf(key));
    }
    if (typeof payload.userCode === 'string') this.userCodes.set(payload.userCode, idOf(key));
    if (typeof payload.grantId === 'string' && grantableModels.has(modelOf(key))) {
      const members = this.grants.get(payload.grantId) ?? new Set<string>();
      members.add(key);
      this.grants.set(payload.grantId, members);
    }
    this.sweepIfDue();
  }

  delete(key: string): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    const { uid, userCode, grantId } = entry.payload;
    if (typeof uid === 'string' && this.uids.get(uid) === idOf(key)) this.uids.delete(uid);
    if (typeof userCode === 'string' && this.userCodes.get(userCode) === idOf(key)) {
      this.userCodes.delete(userCode);
    }
    if (typeof grantId === 'string') {
      const members = this.grants.get(grantId);
      members?.delete(key);
      if (members?.size === 0) this.grants.delete(grantId);
    }
  }

  revokeGrant(grantId: string): void {
    for (const key of [...(this.grants.get(grantId) ?? [])]) this.delete(key);
    this.grants.delete(grantId);
  }

  private sweepIfDue(): void {
    const now = this.now();
    if (now - this.lastSweep < sweepEveryMs) return;
    this.lastSweep = now;
    for (const [key, entry] of this.entries) if (entry.expiresAt <= now) this.delete(key);
  }
}

/** oidc-provider's models whose entries carry a grant id and go when their grant is revoked. */
export const grantableModels: ReadonlySet<string> = new Set([
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'DeviceCode',
  'BackchannelAuthenticationRequest',
]);

const modelOf = (key: string): string => key.slice(0, key.indexOf(':'));
const idOf = (key: string): string => key.slice(key.indexOf(':') + 1);

class ExpiringMemoryAdapter implements Adapter {
  constructor(
    private readonly model: string,
    private readonly store: ExpiringStore,
  ) {}

  private key(id: string): string {
    return `${this.model}:${id}`;
  }

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    this.store.set(this.key(id), payload, expiresIn);
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    return this.store.get(this.key(id));
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    const id = this.store.uids.get(uid);
    return id === undefined ? undefined : this.find(id);
  }

  async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    const id = this.store.userCodes.get(userCode);
    return id === undefined ? undefined : this.find(id);
  }

  async consume(id: string): Promise<void> {
    const payload = this.store.get(this.key(id));
    if (payload !== undefined) payload.consumed = Math.floor(this.store.now() / 1000);
  }

  async destroy(id: string): Promise<void> {
    this.store.delete(this.key(id));
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    this.store.revokeGrant(grantId);
  }
}
