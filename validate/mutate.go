package validate

// checkContent raises blind-to-content where a changed argument value still passes.
func (v *taskCheck) checkContent(o *oracleRun) {}

// checkSideEffects raises blind-to-side-effect where an extra, unrequested action still passes.
func (v *taskCheck) checkSideEffects(o *oracleRun) {}

// checkBrittle raises brittle-verifier where a harmless rewrite of the reference's prose fails.
func (v *taskCheck) checkBrittle(o *oracleRun) {}

// checkChange raises blind-to-change where work done on the state before a turn's change passes.
func (v *taskCheck) checkChange(o *oracleRun) {}
