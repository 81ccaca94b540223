package modelagent

import (
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/workspace/tools"
)

// Description is what a trace records of the model behind an agent (the start event's model).
type Description struct {
	Name string
	// BaseURL is the endpoint without user info, query or fragment (they may hold secrets).
	BaseURL string
	// Request are the fields set on every request besides model, messages and tools, as sent:
	// temperature, top_p, max_tokens or max_completion_tokens, stop, then the extra body.
	Request *jsonv.Object
	// Headers are the names of the extra headers, sorted, without their values.
	Headers []string
	// ToolCallFormat and ReasoningHistory are the settings in force (auto is resolved for
	// ReasoningHistory: keep or drop).
	ToolCallFormat   string
	ReasoningHistory string
	// ToolChoice is the tool_choice sent with the tools ("" when none is sent).
	ToolChoice string
}

// Describe describes the agent's model for a trace.
func (a *Agent) Describe() Description {
	d := Description{Name: a.cfg.Model, BaseURL: publicURL(a.cfg.BaseURL), Request: jsonv.Clone(a.tr.fields).(*jsonv.Object),
		ToolCallFormat: a.cfg.ToolCallFormat, ReasoningHistory: a.cfg.ReasoningHistory, ToolChoice: a.cfg.ToolChoice}
	seen := map[string]bool{}
	add := func(name string) {
		name = strings.TrimSpace(name)
		if name != "" && !seen[name] {
			seen[name] = true
			d.Headers = append(d.Headers, name)
		}
	}
	for _, name := range sortedKeys(a.cfg.Headers) {
		add(name)
	}
	for _, name := range a.cfg.HostHeaders {
		if validHeaderName(strings.TrimSpace(name)) {
			add(http.CanonicalHeaderKey(strings.TrimSpace(name)))
		}
	}
	sort.Strings(d.Headers)
	return d
}

// requestFields are the fields the agent sets on every request body (besides model, messages
// and tools): temperature, top_p, max_tokens (or max_completion_tokens), stop, then the members
// of the extra body, which replace the agent's of the same name.
func (a *Agent) requestFields() *jsonv.Object {
	cfg := &a.cfg
	o := &jsonv.Object{}
	if cfg.Temperature != nil {
		o.Set("temperature", *cfg.Temperature)
	}
	if cfg.TopP != nil {
		o.Set("top_p", *cfg.TopP)
	}
	if cfg.MaxTokens > 0 {
		key := "max_tokens"
		if a.maxCompl {
			key = "max_completion_tokens"
		}
		o.Set(key, int64(cfg.MaxTokens))
	}
	if len(cfg.Stop) > 0 {
		o.Set("stop", tools.Strings(cfg.Stop))
	}
	if cfg.ExtraBody != nil {
		for _, m := range cfg.ExtraBody.Members {
			o.Set(m.Key, jsonv.Clone(m.Value))
		}
	}
	return o
}

// publicURL is u without user info, query and fragment.
func publicURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	p.User, p.RawQuery, p.ForceQuery, p.Fragment, p.RawFragment = nil, "", false, "", ""
	return p.String()
}
