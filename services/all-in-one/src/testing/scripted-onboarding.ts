import type { ConnectRouter } from '@connectrpc/connect';
import { OnboardingService } from '@gateway/contracts';

/**
 * A stand-in for the onboarding service that implements its real contract but reports what
 * a test scripts as missing (field definitions arrive with the onboarding issue). Profiles
 * are not kept: identity claims are accepted and dropped.
 */
export function createScriptedOnboarding() {
  const missing = { global: [] as string[], platform: [] as string[] };
  return {
    missing,
    routes(router: ConnectRouter): void {
      router.service(OnboardingService, {
        evaluateOnboarding: () => ({
          globalMissingFields: missing.global,
          platformMissingFields: missing.platform,
          platformStatus: missing.platform.length > 0 ? 'IN_PROGRESS' : 'COMPLETE',
        }),
        applyIdentityClaims: () => ({}),
      });
    },
  };
}
