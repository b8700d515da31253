// The demo platform on its own: `pnpm --filter @gateway/demo-platform start` with
// DEMO_PLATFORM_BFF_CLIENT_ID / DEMO_PLATFORM_BFF_CLIENT_SECRET of a platform registered at
// the gateway (GATEWAY_URL, default http://localhost:8080). `pnpm start` runs it for you,
// with a key it registered through the admin API.
import { DemoPlatformConfigError, demoPlatformSettingsFromEnv } from './settings-from-env.js';
import { DemoPlatformPortError, startDemoPlatform } from './start-demo-platform.js';

try {
  const settings = demoPlatformSettingsFromEnv(process.env);
  const running = await startDemoPlatform(settings);
  process.stdout.write(
    `Demo platform (${settings.platformKey}) on ${settings.publicOrigin}, signing in through ${settings.gatewayUrl}\n`,
  );
  let closing = false;
  const shutdown = () => {
    if (closing) return;
    closing = true;
    setTimeout(() => process.exit(1), 10_000).unref();
    running.close().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`demo platform: shutdown failed: ${String(error)}\n`);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
} catch (error) {
  if (!(error instanceof DemoPlatformConfigError) && !(error instanceof DemoPlatformPortError)) {
    throw error;
  }
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
}
