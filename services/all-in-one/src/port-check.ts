import { createServer } from 'node:net';

/** A port this process is about to listen on, and the variable that chooses it. */
export type PortClaim = {
  port: number;
  /** PORT, DEMO_PLATFORM_PORT. */
  variable: string;
  /** `The gateway`, `The demo platform`. */
  listener: string;
};

/** The one-line message of a port that cannot be used, naming the variable to change. */
export function portUnavailableMessage(claim: PortClaim, code: string): string {
  const reason = code === 'EADDRINUSE' ? 'already in use' : 'not permitted';
  return (
    `${claim.listener} cannot listen on port ${claim.port} (${reason}). ` +
    `Stop what uses it or choose another port with ${claim.variable}.`
  );
}

/** An error of listen() that means the port is not ours to use. */
export function isPortUnavailable(error: unknown): error is NodeJS.ErrnoException {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'EADDRINUSE' || code === 'EACCES';
}

/**
 * The message for the first claimed port that cannot be listened on, tried the way the
 * servers listen (every interface), or undefined when all are free. A second copy of the
 * process learns it before it opens anything.
 */
export async function unavailablePortMessage(
  claims: readonly PortClaim[],
): Promise<string | undefined> {
  for (const [index, claim] of claims.entries()) {
    const other = claims.slice(0, index).find((earlier) => earlier.port === claim.port);
    if (other !== undefined) {
      return `${other.variable} and ${claim.variable} are both ${claim.port}; choose different ports.`;
    }
  }
  for (const claim of claims) {
    const code = await tryListening(claim.port);
    if (code !== undefined) return portUnavailableMessage(claim, code);
  }
  return undefined;
}

function tryListening(port: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (error) => {
      if (isPortUnavailable(error)) resolve(error.code);
      else reject(error);
    });
    server.listen(port, () => server.close(() => resolve(undefined)));
  });
}
