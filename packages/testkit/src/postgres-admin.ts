import pg from 'pg';
import { isContainerRuntimeAvailable } from './container-runtime.js';

export const LOCAL_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/test';
const PROBE_TIMEOUT_MS = 2_000;

let adminUrlPromise: Promise<string> | undefined;

/**
 * The URL of a PostgreSQL server (and database) on which tests may CREATE DATABASE, found once
 * per process: DATABASE_URL, else the local server, else a testcontainer when Docker runs.
 */
export function postgresAdminUrl(): Promise<string> {
  adminUrlPromise ??= findPostgresAdminUrl().catch((error: unknown) => {
    adminUrlPromise = undefined; // let a later call try again
    throw error;
  });
  return adminUrlPromise;
}

async function findPostgresAdminUrl(): Promise<string> {
  const fromEnvironment = process.env.DATABASE_URL;
  if (fromEnvironment) return fromEnvironment;
  if (await postgresAnswers(LOCAL_POSTGRES_URL)) return LOCAL_POSTGRES_URL;
  if (await isContainerRuntimeAvailable()) return startPostgresContainer();
  throw new Error(
    'No PostgreSQL server for tests: DATABASE_URL is not set, nothing answered at ' +
      `${LOCAL_POSTGRES_URL} within ${PROBE_TIMEOUT_MS / 1000} s, and no Docker engine is ` +
      'reachable for testcontainers. Either set DATABASE_URL to a PostgreSQL database whose ' +
      'user may CREATE DATABASE (e.g. postgres://postgres@db-host:5432/postgres), or start ' +
      'PostgreSQL on 127.0.0.1:5432 accepting user "postgres" without a password and create ' +
      'a database named "test".',
  );
}

async function postgresAnswers(url: string): Promise<boolean> {
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: PROBE_TIMEOUT_MS,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

async function startPostgresContainer(): Promise<string> {
  const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
  // Started once per process; testcontainers' reaper removes it when the process exits.
  const container = await new PostgreSqlContainer('postgres:16-alpine').start();
  return container.getConnectionUri();
}

/** Runs `work` with a fresh connection to `url`, always closing it. */
export async function withPostgresClient<T>(
  url: string,
  work: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  client.on('error', () => {});
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => {});
  }
}
