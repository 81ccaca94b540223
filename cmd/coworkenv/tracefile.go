package main

import (
	"fmt"
	"os"

	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/trace"
)

// traceFile streams a trace into PATH.partial and renames it to PATH when the episode ends, so
// a killed run leaves a readable prefix and never a half-written PATH.
type traceFile struct {
	path string
	f    *os.File
	w    *trace.Writer
}

func createTrace(path string, s trace.Start) (*traceFile, error) {
	f, err := os.Create(path + ".partial")
	if err != nil {
		return nil, err
	}
	return &traceFile{path: path, f: f, w: trace.NewWriter(f, s)}, nil
}

func (t *traceFile) finish(r *episode.Result) error {
	err := t.w.End(r)
	if cerr := t.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Rename(t.path+".partial", t.path); err != nil {
		return fmt.Errorf("renaming the finished trace: %w", err)
	}
	return nil
}

// finishPartial ends an interrupted episode's trace with its end event but leaves it at
// PATH.partial: complete enough to read and replay, and named for what it is.
func (t *traceFile) finishPartial(r *episode.Result) error {
	err := t.w.End(r)
	if cerr := t.f.Close(); err == nil {
		err = cerr
	}
	return err
}
