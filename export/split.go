package export

import "fmt"

// TestSplit is the name of the split held out for evaluation (package split).
const TestSplit = "test"

// SplitOf is the split of the task the trace records (rollout --split...), "" when none.
func (e *Episode) SplitOf() string {
	if sp := e.Start().Split; sp != nil {
		return sp.Name
	}
	return ""
}

// TestSplitError is an episode of the test split given to a training export.
type TestSplitError struct{ Path, Task, Family string }

func (e *TestSplitError) Error() string {
	return fmt.Sprintf("%s: task %s is in the test split (family %s): held out for evaluation, it must not become training data (--allow-test exports it anyway)", e.Path, e.Task, e.Family)
}

// RefuseTest refuses an episode of the test split (RunOptions.Refuse of the training kinds).
func RefuseTest(e *Episode) error {
	if e.SplitOf() != TestSplit {
		return nil
	}
	return &TestSplitError{Path: e.Path, Task: e.Task(), Family: e.Start().Split.Family}
}
