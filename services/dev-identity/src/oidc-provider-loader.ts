import type { Configuration, errors } from 'oidc-provider';
import type OidcProvider from 'oidc-provider';

/** An oidc-provider instance (its default export, under a name). */
export type Provider = OidcProvider;
export type ProviderErrors = typeof errors;

/**
 * Loads oidc-provider and constructs one provider. The package announces on the console, when
 * it is loaded and constructed, that it prefers Node 22 and which development defaults are in
 * use; the service runs on Node 20 on purpose (the project's engines) and configures what
 * those notices are about, so they are held back while this runs.
 */
export async function constructProvider(
  issuer: string,
  configuration: (providerErrors: ProviderErrors) => Configuration,
): Promise<Provider> {
  return withoutProviderNotices(async () => {
    const loaded = await import('oidc-provider');
    return new loaded.default(issuer, configuration(loaded.errors));
  });
}

const providerNotice = /oidc-provider (WARNING|NOTICE):/;

// Constructions that overlap (several services starting at once) share one patch of the
// console, restored when the last of them is done.
let quieted: { count: number; warn: Console['warn']; info: Console['info'] } | undefined;

async function withoutProviderNotices<T>(work: () => Promise<T>): Promise<T> {
  if (quieted === undefined) {
    const { warn, info } = console;
    const quiet =
      (write: (...args: unknown[]) => void) =>
      (...args: unknown[]) => {
        if (typeof args[0] === 'string' && providerNotice.test(args[0])) return;
        write.apply(console, args);
      };
    quieted = { count: 0, warn, info };
    console.warn = quiet(warn);
    console.info = quiet(info);
  }
  quieted.count += 1;
  try {
    return await work();
  } finally {
    quieted.count -= 1;
    if (quieted.count === 0) {
      console.warn = quieted.warn;
      console.info = quieted.info;
      quieted = undefined;
    }
  }
}
