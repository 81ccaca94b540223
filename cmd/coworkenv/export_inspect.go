package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/coworkenv/coworkenv/export"
)

// inspectExport is `coworkenv export inspect`.
var inspectExport = &exportKind{
	name:    "inspect",
	outKind: outputFile,
	help: "inspect: one Inspect AI eval log in JSON (FILE.json, log format version 2) with a sample per episode:\n" +
		"its id is the task, its epoch the sample number + 1; its messages are Inspect chat messages (tool\n" +
		"calls with arguments as an object, tool errors); its score's value is the reward, its explanation the\n" +
		"failed checks, its metadata the verdict, components and per-turn rewards. The results are the mean\n" +
		"reward, its standard error and the pass rate. Times come from the traces' virtual clocks. inspect view\n" +
		"--log-dir DIR lists a .json log whose name starts with a time, like 2026-01-05T09-00-00_tasks.json.\n" +
		"docs/interchange.md maps every field.",
	flags: func(fs *flag.FlagSet) func(string) (export.Sink, error) {
		return func(out string) (export.Sink, error) {
			if !strings.HasSuffix(out, ".json") {
				return nil, fmt.Errorf("--out: %s: export inspect writes Inspect's JSON log format; give a FILE.json", out)
			}
			return &inspectSink{path: out, log: export.NewInspectLog()}, nil
		}
	},
}

// inspectSink gathers the samples of one eval log and writes it, atomically, at Commit.
type inspectSink struct {
	path string
	log  *export.InspectLog
}

func (s *inspectSink) Skip(e *export.Episode) string              { return "" }
func (s *inspectSink) Add(e *export.Episode, system string) error { return s.log.Add(e, system) }
func (s *inspectSink) Abort()                                     {}

func (s *inspectSink) Commit() error {
	return s.log.WriteFile(s.path)
}
