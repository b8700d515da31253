export { onboardingMigrations } from './onboarding-migrations.js';
export {
  createOnboardingImplementations,
  type OnboardingServiceOptions,
} from './onboarding-service.js';
