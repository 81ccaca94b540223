package chat_test

import (
	"testing"

	"github.com/coworkenv/coworkenv/internal/servicetest"
)

var start = servicetest.Start

// TestScripts runs each testdata/*.star file over a fresh workspace (see servicetest).
func TestScripts(t *testing.T) { servicetest.RunScripts(t, "testdata/*.star") }
