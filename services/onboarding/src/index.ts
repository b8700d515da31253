export { onboardingMigrations } from './onboarding-migrations.js';
export { createOnboardingRoutes, type OnboardingServiceOptions } from './onboarding-service.js';
