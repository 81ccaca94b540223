package generator

import "errors"

// ErrBudget stops a run whose next attempt would take it past Options.BudgetTokens. The
// attempts before it are committed: the same command with a larger budget resumes.
var ErrBudget = errors.New("the token budget is reached")

// budgetStop says whether an attempt may not start: the tokens of the committed records, with
// each of the inflight attempts started before it and itself costing the mean of a committed
// attempt, would pass budget (0: no budget). Before any attempt is committed the mean is
// unknown and only a budget already spent stops.
func budgetStop(records []Record, inflight int, budget int) bool {
	if budget <= 0 {
		return false
	}
	spent := 0
	for _, r := range records {
		spent += r.Tokens.Total
	}
	mean := 0
	if len(records) > 0 {
		mean = (spent + len(records) - 1) / len(records) // rounded up
	}
	return spent+mean*(inflight+1) > budget || spent >= budget
}
