package export

import "github.com/coworkenv/coworkenv/internal/jsonv"

// SFTOptions choose the episodes of `export sft`.
type SFTOptions struct {
	// MinScore keeps episodes whose score is at least *MinScore; nil keeps passed episodes.
	MinScore *float64
	// IncludeReference keeps traces of agents that are not models (the oracle's reference
	// demonstrations); by default only model traces are kept.
	IncludeReference bool
}

// SFTSkip says why an episode is not an SFT example, "" when it is one.
func SFTSkip(e *Episode, o SFTOptions) string {
	if why := RLSkip(e); why != "" {
		return why
	}
	switch {
	case !e.FromModel() && !o.IncludeReference:
		return "not a model's episode (use --include-oracle)"
	case e.Error() != "":
		return "the episode ended with an error"
	case o.MinScore != nil && e.Score() < *o.MinScore-1e-9:
		return "score below --min-score"
	case o.MinScore == nil && !e.Passed():
		return "not passed"
	case !e.HasAssistant():
		return "no assistant message"
	case e.MalformedCalls() > 0:
		return "a tool call with malformed arguments"
	}
	return ""
}

// SFT is one line of `export sft`: {"messages", "tools"}.
func SFT(e *Episode, system string) *jsonv.Object {
	return jsonv.NewObject("messages", e.Messages(system), "tools", e.Tools())
}
