export { createDemoPlatformApp, type DemoPlatformOptions } from './demo-platform-app.js';
export {
  DemoPlatformConfigError,
  demoPlatformPortFromEnv,
  demoPlatformSettingsFromEnv,
  demoPlatformVariables,
  type DemoPlatformSettings,
} from './settings-from-env.js';
export {
  DemoPlatformPortError,
  startDemoPlatform,
  type RunningDemoPlatform,
} from './start-demo-platform.js';
