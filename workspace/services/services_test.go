package services

import (
	"testing"
	"time"

	"github.com/coworkenv/coworkenv/workspace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEveryServiceChangeIsSeen is the kernel's guard: a change made through each service's own
// API must change the state hash, show in that service's section of the diff (and nowhere
// else), and be in the history.
func TestEveryServiceChangeIsSeen(t *testing.T) {
	for _, s := range All {
		t.Run(s.Name, func(t *testing.T) {
			require.NotNil(t, s.Probe, "every service declares a Probe")
			base := workspace.New(time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC), 1)
			base.Freeze()
			st := base.Fork()
			require.NoError(t, s.Probe(st))
			assert.NotEqual(t, base.Hash(), st.Hash(), "the change does not alter the state hash")
			for _, sec := range Sections(workspace.Diff(base, st)) {
				if sec.Service == s {
					assert.False(t, sec.Empty(), "the change does not show in the diff")
				} else {
					assert.True(t, sec.Empty(), "the change shows in the diff of %s", sec.Service.Name)
				}
			}
			h := st.History(base)
			require.NotEmpty(t, h, "the change is not in the history")
			assert.True(t, s.HasKind(h[len(h)-1].Kind), "the action's kind %q is not one of the service's", h[len(h)-1].Kind)
			if s.Part != nil {
				assert.Equal(t, s.Part.Entry, h[len(h)-1].Kind)
				assert.Equal(t, s.Entry, s.Part.Entry, "a service and its part name entries alike")
			}
		})
	}
}

func TestNamesAreUnique(t *testing.T) {
	seen := map[string]string{}
	claim := func(kind, name, by string) {
		if name == "" {
			return
		}
		k := kind + ":" + name
		if other, ok := seen[k]; ok && other != by {
			t.Errorf("%s %q is used by %s and %s", kind, name, other, by)
		}
		seen[k] = by
	}
	for _, s := range All {
		claim("service", s.Name, s.Name)
		claim("ws", s.ScriptName(), s.Name)
		claim("diff", s.DiffField(), s.Name)
		claim("entry", s.Entry, s.Name)
		if len(s.Tools) > 0 {
			claim("group", s.GroupName(), s.Name)
		}
		for _, tl := range s.Tools {
			claim("tool", tl.Name, s.Name)
			assert.Equal(t, s.GroupName(), tl.Group, "tool %s is in the group of its service", tl.Name)
		}
		assert.NotEmpty(t, s.Doc, "service %s has no doc", s.Name)
	}
	n := 0
	for _, s := range All {
		n += len(s.Tools)
	}
	assert.Len(t, Tools(), n)
}

func TestGroupsAndTools(t *testing.T) {
	assert.Equal(t, []string{"fs", "mail", "calendar"}, Groups()[:3], "the kernel's groups come first, in their historical order")
	for _, g := range Groups() {
		for _, tl := range Group(g) {
			got, ok := Tool(tl.Name)
			require.True(t, ok)
			assert.Same(t, tl, got)
		}
	}
	assert.Nil(t, Group("nope"))
}
