import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDemoPlatformApp, type DemoPlatformOptions } from './demo-platform-app.js';

export type RunningDemoPlatform = { url: string; port: number; close(): Promise<void> };

/** The port is taken or not ours to use: the message names DEMO_PLATFORM_PORT. */
export class DemoPlatformPortError extends Error {
  override readonly name = 'DemoPlatformPortError';
}

/**
 * Serves the demo platform on `port` (every interface, like the gateway). A port in use
 * fails with a DemoPlatformPortError that names DEMO_PLATFORM_PORT. `close` stops
 * accepting connections, lets in-flight requests finish and drops idle keep-alive ones.
 */
export async function startDemoPlatform(
  options: DemoPlatformOptions & { port: number; host?: string },
): Promise<RunningDemoPlatform> {
  const { port, host, ...appOptions } = options;
  const server = createServer(createDemoPlatformApp(appOptions));
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE' || error.code === 'EACCES') {
        reject(
          new DemoPlatformPortError(
            `The demo platform cannot listen on port ${port} (${error.code === 'EADDRINUSE' ? 'already in use' : 'not permitted'}). ` +
              'Stop what uses it or choose another port with DEMO_PLATFORM_PORT.',
            { cause: error },
          ),
        );
      } else {
        reject(error);
      }
    });
    server.listen(port, host, () => resolve());
  });
  server.requestTimeout = 30_000;
  const actualPort = (server.address() as AddressInfo).port;
  return {
    url: `http://localhost:${actualPort}`,
    port: actualPort,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error === undefined ? resolve() : reject(error)));
        server.closeIdleConnections();
      }),
  };
}
