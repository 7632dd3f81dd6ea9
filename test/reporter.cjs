// The spec reporter, plus a closing line in the plain "N passed, N failed" form that CI reads.
const Mocha = require("mocha");

class SpecWithSummary extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    runner.once(Mocha.Runner.constants.EVENT_RUN_END, () => {
      const { passes, failures, pending } = runner.stats ?? this.stats;
      console.log(`\ntests: ${passes} passed, ${failures} failed, ${pending} skipped`);
    });
  }
}

module.exports = SpecWithSummary;
