// Prints one plain closing line ("jest: N passed, N failed, N skipped") as the very last output, so CI logs state
// the count in a form any reader or tool can pick out. Written at process exit: after jest's own summary.
const { writeSync } = require('node:fs');

class SummaryReporter {
  onRunComplete(_contexts, results) {
    const skipped = results.numPendingTests + results.numTodoTests;
    const line = `\njest: ${results.numPassedTests} passed, ${results.numFailedTests} failed, ${skipped} skipped\n`;
    process.once('exit', () => writeSync(1, line));
  }
}
module.exports = SummaryReporter;
