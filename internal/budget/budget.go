// Package budget lets a builtin below package dsl (the ws value of package wsmod, the services'
// methods) charge the work it does to the step budget of the script that calls it, as the
// builtins of dsl do with dsl.Charge: dsl installs its Charge on every thread it makes
// (dsl.NewThread), and Charge here calls it. On a thread without one, charging is free.
package budget

import "go.starlark.net/starlark"

const key = "coworkenv.budget"

// Charger counts n steps of work against th's budget and returns the error that stops the
// script when the budget is spent (or the call was cancelled).
type Charger func(th *starlark.Thread, n uint64) error

// Install makes Charge on th call c.
func Install(th *starlark.Thread, c Charger) { th.SetLocal(key, c) }

// Charge counts n steps of work a builtin does for the script running on th (nil: none).
func Charge(th *starlark.Thread, n uint64) error {
	if th == nil || n == 0 {
		return nil
	}
	if c, ok := th.Local(key).(Charger); ok {
		return c(th, n)
	}
	return nil
}
