import { OnboardingService } from '@gateway/contracts';
import { implementationOf } from '@gateway/rpc';

/**
 * A stand-in for the onboarding service in the edge's route tests (which test the edge
 * alone; the real service runs in the all-in-one tests). It answers the requirementVersion
 * that platform responses carry: 3 unless a test sets another one.
 */
export function createFakeOnboarding() {
  const versions = new Map<string, number>();
  return {
    versions,
    implementation: implementationOf(OnboardingService, {
      getRequirementVersions: (request) => ({
        versions: Object.fromEntries(
          request.platformKeys.map((key) => [key, versions.get(key) ?? 3]),
        ),
      }),
    }),
  };
}
