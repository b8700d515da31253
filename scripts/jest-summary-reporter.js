// Prints the plain closing line CI readers look for: "N passed, N failed".
export default class SummaryReporter {
  onRunComplete(_contexts, results) {
    const { numPassedTests, numFailedTests, numPendingTests } = results;
    const skipped = numPendingTests > 0 ? `, ${numPendingTests} skipped` : '';
    process.stdout.write(`\nTests: ${numPassedTests} passed, ${numFailedTests} failed${skipped}\n`);
  }
}
