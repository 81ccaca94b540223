package episode

// FuncDoc documents one attribute or method of the `ep` and `agent` values.
type FuncDoc struct{ Name, Signature, Doc string }

// Reference documents `ep` (verifiers and user functions) and `agent` (solutions).
var Reference = []FuncDoc{
	{"ep.turn", "ep.turn", "Index of the turn being scored, from 0; in the final verifier the last turn's index; in a `user` function the turn being asked."},
	{"ep.replies", "ep.replies", "The agent's reply per turn so far (a first-turn `user` function sees `[]`)."},
	{"ep.reply", "ep.reply", "The last reply, or None before the first one."},
	{"ep.calls", "ep.calls", "Every tool call attempt so far, as structs with `id`, `name`, `args` (a dict, as the agent sent them), `result` (decoded, or None), `error` (a string, or None), `fault` (an injected transient error) and `turn`."},
	{"ep.called", "ep.called(name, **args)", "How many calls to `name` succeeded with at least these argument values."},
	{"agent.call", "agent.call(name, **args)", "Calls a tool through exactly the interface an agent has and returns its decoded result. A tool error stops the solution (`solution-error`); a call that hits an injected fault is retried up to 10 times, each attempt recorded."},
	{"agent.reply", "agent.reply(text)", "Ends the turn with a reply; a solution that returns without one replies \"\"."},
}
