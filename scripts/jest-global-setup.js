// Runs once before the test files: names this run, so the template databases that test files
// share (packages/testkit, createTestDatabase with a template) belong to it alone and its
// global teardown drops them. Workers start after this and inherit the variable.
import { randomBytes } from 'node:crypto';

export default function globalSetup() {
  process.env.GATEWAY_TEST_RUN_ID = randomBytes(6).toString('hex');
}
