package export

import (
	"context"
	"fmt"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
)

// Systems finds the system message of episodes (see the package documentation), loading each
// task and running its setup once per seed.
type Systems struct {
	// Load finds the task of a trace (wherever its task file is now: see `coworkenv replay`).
	// Nil means only recorded system prompts are used.
	Load  func(e *Episode) (*dsl.Task, error)
	cache map[string]systemEntry
}

type systemEntry struct {
	prompt string
	err    error
}

// For is the system message of e: the recorded one, else the default prompt rebuilt from the
// task. An error says why there is none (the message is then "").
func (s *Systems) For(e *Episode) (string, error) {
	if sys := e.RecordedSystem(); sys != "" {
		return sys, nil
	}
	if s.Load == nil {
		return "", fmt.Errorf("the trace records no system prompt")
	}
	key := fmt.Sprintf("%s\x00%s\x00%d", e.File(), e.Task(), e.Seed())
	if ent, ok := s.cache[key]; ok {
		return ent.prompt, ent.err
	}
	if s.cache == nil {
		s.cache = map[string]systemEntry{}
	}
	var ent systemEntry
	ent.prompt, ent.err = s.rebuild(e)
	s.cache[key] = ent
	return ent.prompt, ent.err
}

func (s *Systems) rebuild(e *Episode) (string, error) {
	task, err := s.Load(e)
	if err != nil {
		return "", err
	}
	p, d := episode.Prepare(context.Background(), task, episode.Options{Seed: e.Seed()})
	if d != nil {
		return "", fmt.Errorf("%s: setup: %s", e.Task(), d.Message)
	}
	return modelagent.SystemPromptOf("", p), nil
}
