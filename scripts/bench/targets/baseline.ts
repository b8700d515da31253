// The baselines of `pnpm bench`: the cheapest servers that do what a
// gateway request minimally does, measured with the same load generator in the same run.
//   node-http          bare node:http hello
//   express            Express 5 hello
//   express-redis-get  an Express route doing one ioredis GET
//   express-pg-select  an Express route doing one primary-key SELECT through a pg Pool
import { createServer, type Server } from 'node:http';
import express from 'express';
import { Redis } from 'ioredis';
import pg from 'pg';
import { exitOnSignals, portOf, reportReady } from './ipc.js';

const kind = process.argv[2];
const listen = (server: Server) =>
  new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));

let server: Server;
let close: () => Promise<void> = async () => undefined;

if (kind === 'node-http') {
  server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('hello world');
  });
} else if (kind === 'express') {
  const app = express();
  app.disable('x-powered-by');
  app.get('/', (_req, res) => {
    res.type('text/plain').send('hello world');
  });
  server = createServer(app);
} else if (kind === 'express-redis-get') {
  // The key is written by the bench (under its prefix) before the target starts.
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', {
    keyPrefix: process.env.REDIS_KEY_PREFIX ?? '',
  });
  const key = process.env.BENCH_REDIS_KEY ?? 'baseline:value';
  const app = express();
  app.disable('x-powered-by');
  app.get('/', async (_req, res) => {
    const value = await redis.get(key);
    res.json({ found: value !== null, length: value?.length ?? 0 });
  });
  server = createServer(app);
  close = async () => {
    redis.disconnect();
  };
} else if (kind === 'express-pg-select') {
  // The table is created and filled by the bench; the pool is as large as the gateway's (10).
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
  const rows = Number(process.env.BENCH_PG_ROWS ?? '1000');
  let next = 0;
  const app = express();
  app.disable('x-powered-by');
  app.get('/', async (_req, res) => {
    next = (next % rows) + 1;
    const result = await pool.query(
      'select id, subject, email, status from bench_baseline where id = $1',
      [next],
    );
    res.json(result.rows[0] ?? null);
  });
  server = createServer(app);
  close = () => pool.end();
} else {
  throw new Error(`unknown baseline: ${kind}`);
}

await listen(server);
reportReady({ port: portOf(server) });
exitOnSignals(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await close();
});
