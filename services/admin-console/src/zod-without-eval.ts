import { config } from 'zod';

// The console runs under `script-src 'self'` (no 'unsafe-eval'). Zod compiles object
// parsers with `new Function` unless told not to, and probes for it once even inside a
// try/catch: Chromium reports that probe as a `securitypolicyviolation` (blocked "eval",
// script-src) from the console's bundle. Jitless parsing evaluates no string at all. Zod
// reads the setting when a schema is built, so this module is imported before any other
// (main.tsx) and before @gateway/field-rules builds its schemas.
config({ jitless: true });
