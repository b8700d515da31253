// Testcontainers is loaded only from here, and only when no local server answered, so an
// ordinary run (local PostgreSQL/Redis or DATABASE_URL/REDIS_URL) never loads it.

/** True when testcontainers can reach a Docker (or compatible) engine. */
export async function isContainerRuntimeAvailable(): Promise<boolean> {
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    await getContainerRuntimeClient();
    return true;
  } catch {
    return false;
  }
}
