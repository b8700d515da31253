import type { Client } from '@connectrpc/connect';
import type { RegistryService } from '@gateway/contracts';
import type { Logger } from '@gateway/telemetry';
import { parseBasicCredentials } from '../http/basic-credentials.js';

/**
 * Who presented refused platform credentials: the client id when one was readable. `limited`
 * when the back-off answered the attempt 429 rather than 401.
 */
export type FailedPlatformAuthentication = {
  clientId: string | undefined;
  address: string;
  limited?: boolean;
};

export type FailedPlatformAuthentications = {
  /** Counts one refusal; cheap and synchronous, whatever the rate. */
  recordFailedPlatformAuthentication(failure: FailedPlatformAuthentication): void;
  /** Writes what is counted now (also done by the window's timer). */
  flush(): Promise<void>;
};

type Tally = {
  targetType: 'platform_client' | 'address';
  key: string;
  count: number;
  /** Of `count`, the attempts refused by the back-off. */
  limited: number;
  addresses: Set<string>;
};

const ADDRESSES_KEPT_PER_KEY = 5;

/** The client id of a Basic header, whatever its secret; undefined when none is readable. */
export function presentedClientIdOf(authorization: string | undefined): string | undefined {
  try {
    return parseBasicCredentials(authorization).clientId;
  } catch {
    return undefined;
  }
}

/**
 * Refused platform Basic credentials, aggregated for the audit log: one
 * `platform.authentication_failed` record per client id (or per source address when no id
 * was readable) and window, carrying the count and, of it, how many attempts the back-off
 * refused (`limited`). Counting is in memory per edge process; a
 * window opens with its first refusal and is written when it closes, so an idle edge runs
 * no timer. At most `maxKeys` keys are counted per window; refusals beyond them go to one
 * overflow record, so a flood of made-up client ids costs bounded memory and at most
 * `maxKeys + 1` records per window. A process that stops loses its open window.
 */
export function createFailedPlatformAuthentications(options: {
  registry: Pick<Client<typeof RegistryService>, 'appendAuditRecord'>;
  logger: Logger;
  windowMs: number;
  maxKeys?: number;
}): FailedPlatformAuthentications {
  const maxKeys = options.maxKeys ?? 200;
  let tallies = new Map<string, Tally>();
  let overflow = 0;
  let windowStart = 0;
  let timer: NodeJS.Timeout | undefined;

  function tallyOf(failure: FailedPlatformAuthentication): Tally | undefined {
    const targetType = failure.clientId === undefined ? 'address' : 'platform_client';
    const key = failure.clientId ?? failure.address;
    const id = `${targetType}:${key}`;
    let tally = tallies.get(id);
    if (tally === undefined && tallies.size < maxKeys) {
      tally = { targetType, key, count: 0, limited: 0, addresses: new Set() };
      tallies.set(id, tally);
    }
    return tally;
  }

  async function flush(): Promise<void> {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    const written = withOverflow([...tallies.values()], overflow);
    const window = { from: new Date(windowStart).toISOString(), to: new Date().toISOString() };
    tallies = new Map();
    overflow = 0;
    if (written.length === 0) return;
    try {
      for (const tally of written) {
        await options.registry.appendAuditRecord(failureRecord(tally, window));
      }
      options.logger.info(
        { records: written.length, refusals: written.reduce((sum, t) => sum + t.count, 0) },
        'platform authentication failures recorded',
      );
    } catch (error) {
      options.logger.warn({ err: error }, 'platform authentication failures not recorded');
    }
  }

  return {
    recordFailedPlatformAuthentication(failure) {
      if (timer === undefined) {
        windowStart = Date.now();
        timer = setTimeout(() => void flush(), options.windowMs);
        timer.unref();
      }
      const tally = tallyOf(failure);
      if (tally === undefined) {
        overflow += 1;
        return;
      }
      tally.count += 1;
      if (failure.limited === true) tally.limited += 1;
      if (tally.addresses.size < ADDRESSES_KEPT_PER_KEY) tally.addresses.add(failure.address);
    },
    flush,
  };
}

/** The window's tallies, and one `*` address record for the refusals beyond `maxKeys`. */
function withOverflow(tallies: Tally[], overflow: number): Tally[] {
  if (overflow === 0) return tallies;
  return [
    ...tallies,
    { targetType: 'address', key: '*', count: overflow, limited: 0, addresses: new Set() },
  ];
}

/** The `platform.authentication_failed` audit record of one tally and window. */
function failureRecord(tally: Tally, window: { from: string; to: string }) {
  return {
    context: { actor: { kind: 'system', subject: 'edge' } },
    kind: 'platform.authentication_failed',
    targetType: tally.targetType,
    targetId: '',
    targetKey: tally.key,
    details: {
      count: tally.count,
      windowStart: window.from,
      windowEnd: window.to,
      addresses: [...tally.addresses],
      ...(tally.limited > 0 ? { limited: tally.limited } : {}),
      ...(tally.key === '*' ? { overflow: true } : {}),
    },
  };
}
