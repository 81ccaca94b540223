package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/coworkenv/coworkenv/export"
	"github.com/coworkenv/coworkenv/internal/jsonv"
)

// atifExport is `coworkenv export atif`.
var atifExport = &exportKind{
	name:    "atif",
	outKind: outputFolder,
	help: "atif: a folder laid out as Harbor lays out a job, one trial folder per episode,\n" +
		"TASK__SAMPLE/agent/trajectory.json (TASK__NAME for a trace that is not a rollout sample), holding the\n" +
		"episode as a trajectory of Harbor's Agent Trajectory Interchange Format, " + export.ATIFVersion + ": a step for the\n" +
		"system prompt, each user message and each assistant message with its tool calls and their results;\n" +
		"reasoning, token usage, token ids and logprobs when the trace records them; the reward, verdict and\n" +
		"every check in its extra fields; the steps of agents that are not models (the oracle's) have\n" +
		"llm_call_count 0. PATH is replaced whole: it must be missing, empty, or a folder export atif wrote.\n" +
		"docs/interchange.md maps every field and says how to open the output.",
	flags: func(fs *flag.FlagSet) func(string) (export.Sink, error) {
		return openATIF
	},
}

// atifSink writes one trajectory file per episode into a folder, atomically.
type atifSink struct {
	dir  *export.AtomicDir
	used map[string]bool
}

func openATIF(out string) (export.Sink, error) {
	if err := checkATIFFolder(out); err != nil {
		return nil, fmt.Errorf("--out: %v", err)
	}
	dir, err := export.CreateAtomicDir(out)
	if err != nil {
		return nil, fmt.Errorf("--out: %v", err)
	}
	return &atifSink{dir: dir, used: map[string]bool{}}, nil
}

// atifFile is where a trial folder keeps its trajectory, as Harbor keeps it.
const atifFile = "agent/trajectory.json"

// checkATIFFolder refuses to replace a folder that holds anything but what export atif writes
// (TRIAL/agent/trajectory.json files), so that a mistyped --out never deletes other files.
func checkATIFFolder(out string) error {
	info, err := os.Stat(out)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil || !info.IsDir() {
		return err // checkOutput said what is wrong with a file
	}
	var other string
	err = filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(out, p)
		parts := bytes.Count([]byte(filepath.ToSlash(rel)), []byte("/"))
		switch {
		case rel == ".":
		case d.IsDir() && parts <= 1:
		case !d.IsDir() && parts == 2 && filepath.ToSlash(filepath.Join(filepath.Base(filepath.Dir(p)), d.Name())) == atifFile:
		default:
			other = rel
			return filepath.SkipAll
		}
		return nil
	})
	if err != nil {
		return err
	}
	if other != "" {
		return fmt.Errorf("%s holds %s, which export atif did not write; give a new or empty folder (PATH is replaced whole)", out, other)
	}
	return nil
}

func (s *atifSink) Skip(e *export.Episode) string { return "" }

func (s *atifSink) Add(e *export.Episode, system string) error {
	base := export.ATIFTrial(e)
	name := base
	for n := 2; s.used[name]; n++ {
		name = fmt.Sprintf("%s-%d", base, n)
	}
	s.used[name] = true
	b, err := jsonv.Encode(export.ATIF(e, system))
	if err != nil {
		return err
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, b, "", "  "); err != nil {
		return err
	}
	pretty.WriteByte('\n')
	return s.dir.WriteFile(name+"/"+atifFile, pretty.Bytes())
}

func (s *atifSink) Commit() error { return s.dir.Commit() }
func (s *atifSink) Abort()        { s.dir.Abort() }
