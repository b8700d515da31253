// The peer of `pnpm bench`: token introspection (RFC 7662) by the `oidc-provider` package, with an
// opaque access token and client_secret_basic, storing its tokens and grants in Redis through
// the adapter of oidc-provider's own example (a production provider needs a shared store;
// the in-memory adapter is for development only).
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { Redis } from 'ioredis';
import Provider, { type Adapter, type AdapterPayload, type Configuration } from 'oidc-provider';
import { grantableModels as grantable } from '@gateway/oidc-memory-store';
import { exitOnSignals, portOf, reportReady } from './ipc.js';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', {
  keyPrefix: process.env.REDIS_KEY_PREFIX ?? '',
});

const consumable = new Set([
  'AuthorizationCode',
  'RefreshToken',
  'DeviceCode',
  'BackchannelAuthenticationRequest',
]);

class RedisAdapter implements Adapter {
  constructor(private readonly name: string) {}

  private key(id: string) {
    return `${this.name}:${id}`;
  }

  async upsert(id: string, payload: AdapterPayload, expiresIn: number) {
    const key = this.key(id);
    const multi = redis.multi();
    if (consumable.has(this.name)) multi.hset(key, { payload: JSON.stringify(payload) });
    else multi.set(key, JSON.stringify(payload));
    if (expiresIn) multi.expire(key, expiresIn);
    if (grantable.has(this.name) && payload.grantId !== undefined) {
      const grantKey = `grant:${payload.grantId}`;
      multi.rpush(grantKey, key);
      const ttl = await redis.ttl(grantKey);
      if (expiresIn > ttl) multi.expire(grantKey, expiresIn);
    }
    if (payload.userCode !== undefined) {
      multi.set(`userCode:${payload.userCode}`, id);
      multi.expire(`userCode:${payload.userCode}`, expiresIn);
    }
    if (payload.uid !== undefined) {
      multi.set(`uid:${payload.uid}`, id);
      multi.expire(`uid:${payload.uid}`, expiresIn);
    }
    await multi.exec();
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    if (consumable.has(this.name)) {
      const data = await redis.hgetall(this.key(id));
      if (data.payload === undefined) return undefined;
      const { payload, ...rest } = data;
      return { ...rest, ...(JSON.parse(payload) as AdapterPayload) };
    }
    const data = await redis.get(this.key(id));
    return data === null ? undefined : (JSON.parse(data) as AdapterPayload);
  }

  async findByUid(uid: string) {
    const id = await redis.get(`uid:${uid}`);
    return id === null ? undefined : this.find(id);
  }

  async findByUserCode(userCode: string) {
    const id = await redis.get(`userCode:${userCode}`);
    return id === null ? undefined : this.find(id);
  }

  async destroy(id: string) {
    await redis.del(this.key(id));
  }

  async revokeByGrantId(grantId: string) {
    const multi = redis.multi();
    const tokens = await redis.lrange(`grant:${grantId}`, 0, -1);
    for (const token of tokens) multi.del(token);
    multi.del(`grant:${grantId}`);
    await multi.exec();
  }

  async consume(id: string) {
    await redis.hset(this.key(id), 'consumed', Math.floor(Date.now() / 1000));
  }
}

const server = createServer();
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
const origin = `http://127.0.0.1:${portOf(server)}`;
const clientSecret = randomBytes(24).toString('base64url');
const redirectUri = 'http://127.0.0.1:1/peer-callback';

const configuration: Configuration = {
  adapter: RedisAdapter,
  clients: [
    {
      client_id: 'peer-app',
      client_secret: clientSecret,
      token_endpoint_auth_method: 'client_secret_basic',
      grant_types: ['authorization_code'],
      response_types: ['code'],
      redirect_uris: [redirectUri],
    },
  ],
  findAccount: (_ctx, sub) => ({
    accountId: sub,
    claims: () => ({ sub, email: `${sub}@example.test`, email_verified: true }),
  }),
  claims: { openid: ['sub'], email: ['email', 'email_verified'] },
  cookies: { keys: [randomBytes(32).toString('base64url')] },
  features: {
    devInteractions: { enabled: true },
    // Its default policy, spelled out: a confidential client may introspect.
    introspection: {
      enabled: true,
      allowedPolicy: (_ctx, client) => client.clientAuthMethod !== 'none',
    },
  },
  ttl: {
    AccessToken: 3600,
    AuthorizationCode: 60,
    Grant: 3600,
    IdToken: 3600,
    Interaction: 600,
    Session: 3600,
  },
};

// oidc-provider prints development notices when it is constructed: not the bench's concern.
const { warn, info } = console;
console.warn = () => undefined;
console.info = () => undefined;
const provider = new Provider(origin, configuration);
console.warn = warn;
console.info = info;
server.on('request', provider.callback());

reportReady({ origin, clientId: 'peer-app', clientSecret, redirectUri });
exitOnSignals(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  redis.disconnect();
});
