import { existsSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join, resolve } from 'node:path';
import {
  loadConfigOrExit,
  type ConfigIssue,
  type GatewayConfig,
  type GatewayEnvName,
} from '@gateway/config';
import {
  checkRedisKeepsSessions,
  connectRedis,
  createDatabase,
  DataDirLockedError,
  lockDataDir,
  migrateSchema,
  RedisNotDurableError,
  type Database,
  type RedisClient,
} from '@gateway/db';
import { closeOnShutdownSignals } from '@gateway/rpc';
import {
  chooseLogFormat,
  createLogger,
  shutdownTelemetry,
  startTelemetry,
  type Logger,
} from '@gateway/telemetry';
import { describeIssuerFailure } from '@gateway/edge';
import { allSchemaMigrations, startGateway, type RunningGateway } from './gateway-runtime.js';
import {
  isPortUnavailable,
  portUnavailableMessage,
  unavailablePortMessage,
  type PortClaim,
} from './port-check.js';

export type BeforeEdge = {
  handle: (req: IncomingMessage, res: ServerResponse, next: () => void) => void;
  close(): Promise<void>;
};

export type GatewayProcessOptions = {
  /** Variables this command stops without although the schema lets them be unset. */
  requiredConfig?: readonly GatewayEnvName[];
  /** Problems the caller found in variables of its own, reported with the configuration's. */
  configIssues?: readonly ConfigIssue[];
  /** Listeners besides PORT that the process opens later; checked before anything starts. */
  ports?: readonly PortClaim[];
  /** The data folder is used even with DATABASE_URL (the first run keeps keys and accounts there). */
  alwaysUsesDataDir?: boolean;
  /** Runs once the data folder is this process's, before the database opens. */
  onDataDirLocked?: (config: GatewayConfig) => Promise<void>;
  /** Tells what the start is doing (`migrating the database…`); the log's info lines otherwise. */
  announce?: (step: string) => void;
  onStarted?: (gateway: RunningGateway, config: GatewayConfig, logger: Logger) => void;
  /** Started before the gateway and served on its origin (the development identity service). */
  beforeEdge?: (config: GatewayConfig) => Promise<BeforeEdge>;
  /**
   * Runs once the gateway listens (the first run seeds the demo platform through the admin
   * API and starts it); what it returns is closed first at shutdown. A failure stops the
   * process with exit code 1 and its message, after closing everything else.
   */
  afterStart?: (
    gateway: RunningGateway,
    config: GatewayConfig,
    logger: Logger,
  ) => Promise<{ close(): Promise<void> }>;
};

/** What is open so far, closed in reverse order: at shutdown, also midway through the start. */
type OpenResources = {
  add(close: () => Promise<void> | void): void;
  closeAll(): Promise<void>;
  /** closeAll has begun: what fails from now on fails because of it. */
  readonly closing: boolean;
};

function openResources(): OpenResources {
  const closers: (() => Promise<void> | void)[] = [];
  let closing = false;
  return {
    add: (close) => void closers.push(close),
    closeAll: async () => {
      closing = true;
      for (const close of closers.splice(0).reverse()) await close();
    },
    get closing() {
      return closing;
    },
  };
}

/** Writes `message` to stderr, closes what is open and exits with status 1. */
async function stopWithMessage(
  message: string,
  resources: OpenResources,
  logger: Logger,
): Promise<never> {
  process.stderr.write(`${message}\n`);
  await resources
    .closeAll()
    .catch((error: unknown) => logger.error({ err: error }, 'shutdown failed'));
  return process.exit(1);
}

/**
 * Runs the all-in-one gateway as a process. In order, so that a second copy or a mistake
 * stops before anything is touched: configuration from `env` (parsed once; every bad or
 * missing variable named in one message), the data folder locked when it exists (embedded
 * PGlite in GATEWAY_DATA_DIR, unless DATABASE_URL is set), PORT and the other ports free,
 * the data folder created and locked when it did not exist, then the
 * database, Redis when one is configured (REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES;
 * in production checked to keep sessions over its restarts), and the gateway. SIGTERM and
 * Ctrl-C drain it.
 */
export async function runGatewayProcess(
  env: NodeJS.ProcessEnv,
  options: GatewayProcessOptions = {},
): Promise<void> {
  const config = loadConfigOrExit(env, {
    require: options.requiredConfig ?? [],
    issues: options.configIssues ?? [],
  });
  // Files this process creates are its own: the data folder holds keys and the database.
  process.umask(0o077);
  const logger = createLogger({
    service: 'gateway',
    level: config.logLevel,
    format: chooseLogFormat({
      configured: config.logFormat,
      nodeEnv: config.nodeEnv,
      stdoutIsTerminal: process.stdout.isTTY === true,
    }),
  });
  const announce = options.announce ?? ((step: string) => logger.info(step));
  const resources = openResources();
  closeOnShutdownSignals({
    ctrlCFromTerminal: true,
    onError: (error) => logger.error({ err: error }, 'shutdown failed'),
    close: async () => {
      announce('shutting down…');
      await resources.closeAll();
    },
  });
  const ports: PortClaim[] = [{ port: config.port, variable: 'PORT', listener: 'The gateway' }];
  if (config.metricsPort !== undefined) {
    ports.push({
      port: config.metricsPort,
      variable: 'METRICS_PORT',
      listener: 'The metrics endpoint',
    });
  }
  const usesDataDir = config.databaseUrl === undefined || options.alwaysUsesDataDir === true;
  // A second copy on the same data folder is told about the process that holds it, whatever
  // its ports: a folder that exists is locked before the ports are tried. One that does not
  // exist yet is held by no one, and is created only once the ports are known to be free.
  let locked = usesDataDir && existsSync(config.dataDir);
  if (locked) await lockDataDirOrStop(config, resources, logger);
  const taken = await unavailablePortMessage([...ports, ...(options.ports ?? [])]);
  if (taken !== undefined) return stopWithMessage(taken, resources, logger);
  if (usesDataDir && !locked) {
    await lockDataDirOrStop(config, resources, logger);
    locked = true;
  }
  if (locked) await options.onDataDirLocked?.(config);
  startTelemetry({
    serviceName: config.otelServiceName ?? 'gateway',
    ...(config.otlpEndpoint === undefined ? {} : { otlpEndpoint: config.otlpEndpoint }),
    ...(config.metricsPort === undefined ? {} : { metricsPort: config.metricsPort }),
  });
  resources.add(() => shutdownTelemetry());
  const db = await openDatabase(config, announce);
  resources.add(() => db.close());
  await startServing({ config, logger, db, announce, resources, options });
}

/** Makes the data folder this process's, or stops naming the process that holds it. */
async function lockDataDirOrStop(
  config: GatewayConfig,
  resources: OpenResources,
  logger: Logger,
): Promise<void> {
  const locked = await lockDataDir(config.dataDir).catch((error: unknown) => {
    if (error instanceof DataDirLockedError) return error;
    throw error;
  });
  if (locked instanceof DataDirLockedError) {
    return stopWithMessage(locked.message, resources, logger);
  }
  resources.add(() => locked.release());
}

async function openDatabase(
  config: GatewayConfig,
  announce: (step: string) => void,
): Promise<Database> {
  if (config.databaseUrl !== undefined) {
    announce('connecting to PostgreSQL (DATABASE_URL)…');
    return createDatabase({
      url: config.databaseUrl,
      connectTimeoutMs: config.databaseTimeoutMs,
      statementTimeoutMs: config.databaseTimeoutMs,
    });
  }
  const folder = resolve(config.dataDir);
  announce(
    existsSync(join(folder, 'PG_VERSION'))
      ? `opening the embedded database in ${folder}…`
      : `creating the embedded database in ${folder} (the first start takes longer)…`,
  );
  return createDatabase({ dataDir: config.dataDir, connectTimeoutMs: config.databaseTimeoutMs });
}

/**
 * The Redis of REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES, if any. In production it
 * must keep the sessions over its restarts: a warning otherwise, or a stop with the reason
 * when REDIS_REQUIRE_PERSISTENCE is true.
 */
async function openRedis(
  config: GatewayConfig,
  logger: Logger,
  resources: OpenResources,
): Promise<RedisClient | undefined> {
  if (config.redis === undefined) return undefined;
  const redis = await connectRedis({
    ...config.redis,
    keyPrefix: config.redisKeyPrefix,
    timeoutMs: config.databaseTimeoutMs,
  });
  resources.add(() => redis.disconnect());
  if (!config.production) return redis;
  const checked = await checkRedisKeepsSessions(redis, {
    required: config.redisRequirePersistence,
    logger,
  }).catch((error: unknown) => {
    if (error instanceof RedisNotDurableError) return error;
    throw error;
  });
  if (checked instanceof RedisNotDurableError) {
    return stopWithMessage(checked.message, resources, logger);
  }
  return redis;
}

/**
 * Asks IDENTITY_ISSUER for its discovery document once the gateway listens (an issuer served
 * on the gateway's own origin answers by then), beside the rest of the start. One that does
 * not answer stops nothing (spec 4.14: readiness checks the persistent store), but every
 * sign-in would fail: a warning names the environment, the issuer and the error, and
 * /health/ready's details report it until it answers.
 */
async function warnWhenIssuerUnreachable(gateway: RunningGateway, logger: Logger): Promise<void> {
  const { environmentKey, issuer } = gateway.identityIssuer;
  const state = await gateway.identityIssuer.check();
  if (state.status !== 'unreachable') return;
  logger.warn(
    { environmentKey, issuer, error: describeIssuerFailure(state) },
    `The identity issuer of environment ${environmentKey} (IDENTITY_ISSUER ${issuer}) does ` +
      `not answer: ${describeIssuerFailure(state)}. The gateway runs, but sign-in fails until ` +
      'it answers; /health/ready reports it in its details.',
  );
}

async function startServing(context: {
  config: GatewayConfig;
  logger: Logger;
  db: Database;
  announce: (step: string) => void;
  resources: OpenResources;
  options: GatewayProcessOptions;
}): Promise<void> {
  const { config, logger, db, announce, resources, options } = context;
  announce('migrating the database…');
  // startGateway migrates as well; by then it finds nothing pending.
  for (const migrations of allSchemaMigrations) await migrateSchema(db, migrations);
  const redis = await openRedis(config, logger, resources);
  if (options.beforeEdge !== undefined) announce('starting the identity service…');
  const beforeEdge = await options.beforeEdge?.(config);
  if (beforeEdge !== undefined) resources.add(() => beforeEdge.close());
  announce('starting the gateway…');
  const gateway = await startGateway({
    config,
    logger,
    db,
    ...(redis === undefined ? {} : { redis }),
    ...(beforeEdge === undefined ? {} : { beforeEdge: beforeEdge.handle }),
  }).catch((error: unknown) => {
    if (!isPortUnavailable(error)) throw error;
    const claim = { port: config.port, variable: 'PORT', listener: 'The gateway' };
    return stopWithMessage(portUnavailableMessage(claim, error.code ?? ''), resources, logger);
  });
  resources.add(() => gateway.close());
  logger.info(
    {
      port: gateway.port,
      database: db.kind,
      store: redis === undefined ? 'sql' : `redis (${config.redis?.mode ?? 'single'})`,
    },
    'gateway listening',
  );
  void warnWhenIssuerUnreachable(gateway, logger);
  options.onStarted?.(gateway, config, logger);
  if (options.afterStart === undefined) return;
  const started = await options.afterStart(gateway, config, logger).catch((error: unknown) => {
    // Stopped midway (Ctrl-C during the first run): the shutdown exits, not this failure.
    if (resources.closing) return new Promise<never>(() => undefined);
    const message = error instanceof Error ? error.message : String(error);
    return stopWithMessage(message, resources, logger);
  });
  resources.add(() => started.close());
}
