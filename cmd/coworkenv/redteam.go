package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/atomicfile"
	"github.com/coworkenv/coworkenv/isolate"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
	"github.com/coworkenv/coworkenv/runtime/recorded"
	"github.com/coworkenv/coworkenv/validate"
	"github.com/coworkenv/coworkenv/validate/redteam"
)

// validateRedTeamHelp is the part of the usage text of validate about the red team.
const validateRedTeamHelp = `With --red-team-model NAME (at --red-team-base-url, default $OPENAI_BASE_URL, else the OpenAI
API, with the key from $OPENAI_API_KEY), every task in which the checks above find no error is shown to
that model with the probes the validator ran, and the model writes --red-team-hacks wrong
solutions (default 4) and --red-team-careful right ones in other words (default 2) as recorded
runs, which are then played: a hack that passes is the warning hackable, a careful run that fails
careful-run-fails; each message holds the run. --red-team-keep adds the runs that behaved (hacks
that failed, careful runs that passed) to the task file's runs file, FILE.star.runs.json, so that
every later validate plays them again without a model. Requests and tokens are said on stderr.
Without --red-team-model, nothing of this runs.`

// redTeamCounts are the flags that say how many runs the red team writes (validate, generate).
type redTeamCounts struct {
	hacks, careful int
}

func addRedTeamCounts(fs *flag.FlagSet) *redTeamCounts {
	c := &redTeamCounts{}
	fs.IntVar(&c.hacks, "red-team-hacks", redteam.DefaultHacks, "wrong solutions the red team writes per task (0: none)")
	fs.IntVar(&c.careful, "red-team-careful", redteam.DefaultCareful, "right solutions in other words the red team writes per task (0: none)")
	return c
}

func (c *redTeamCounts) options() (redteam.Options, error) {
	if c.hacks < 0 || c.careful < 0 {
		return redteam.Options{}, fmt.Errorf("--red-team-hacks and --red-team-careful must not be negative")
	}
	return redteam.Options{Hacks: c.hacks, Careful: c.careful}, nil
}

// redTeamFlags are validate's flags of the red team.
type redTeamFlags struct {
	fs             *flag.FlagSet
	model, baseURL string
	keep           bool
	counts         *redTeamCounts
}

func addRedTeamFlags(fs *flag.FlagSet) *redTeamFlags {
	f := &redTeamFlags{fs: fs}
	fs.StringVar(&f.model, "red-team-model", "", "after the checks, a model that writes hacks and careful runs for every task that passed them (default: no red team)")
	fs.StringVar(&f.baseURL, "red-team-base-url", "", "the red-team model's base URL (default $OPENAI_BASE_URL, else "+modelagent.DefaultBaseURL+")")
	fs.BoolVar(&f.keep, "red-team-keep", false, "add the red team's runs that behaved to each task file's runs file (FILE.star.runs.json)")
	f.counts = addRedTeamCounts(fs)
	return f
}

// check reads the flags: nil when no red team is asked for.
func (f *redTeamFlags) check(stderr io.Writer, client *http.Client) (*redTeam, error) {
	given := map[string]bool{}
	f.fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	if !given["red-team-model"] {
		for _, n := range []string{"red-team-base-url", "red-team-keep", "red-team-hacks", "red-team-careful"} {
			if given[n] {
				return nil, fmt.Errorf("--%s: only with --red-team-model NAME", n)
			}
		}
		return nil, nil
	}
	name := strings.TrimSpace(f.model)
	if name == "" {
		return nil, fmt.Errorf("--red-team-model: the model name is empty")
	}
	opts, err := f.counts.options()
	if err != nil {
		return nil, err
	}
	if opts.Off() {
		return nil, fmt.Errorf("--red-team-hacks and --red-team-careful are both 0: the red team would write nothing")
	}
	var mu sync.Mutex
	cfg := modelagent.FromEnv(modelagent.Config{Model: name, BaseURL: f.baseURL, HTTPClient: client, OnRetry: func(attempt int, delay time.Duration, reason error) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(stderr, "coworkenv validate: red-team request failed (%v); retry %d in %s\n", reason, attempt, delay.Round(time.Millisecond))
	}}, os.Getenv)
	if cfg.APIKey == "" && (cfg.BaseURL == "" || strings.TrimRight(cfg.BaseURL, "/") == modelagent.DefaultBaseURL) {
		return nil, fmt.Errorf("OPENAI_API_KEY is not set; --red-team-model at %s needs it (for a local server, give --red-team-base-url or OPENAI_BASE_URL)", modelagent.DefaultBaseURL)
	}
	chat, err := modelagent.NewChat(cfg)
	if err != nil {
		from := "--red-team-model"
		if f.baseURL != "" {
			from = "--red-team-base-url"
		}
		return nil, fmt.Errorf("%s: %s", from, strings.TrimPrefix(err.Error(), "modelagent: "))
	}
	return &redTeam{chat: chat, name: name, opts: opts, keep: f.keep}, nil
}

// redTeam is the red team of one validate run.
type redTeam struct {
	chat *modelagent.Chat
	name string
	opts redteam.Options
	keep bool

	mu    sync.Mutex
	usage redteam.Usage
	tasks int // tasks the red team was asked about
}

// redTeamAsk is one task the red team is asked about: its file and what it is shown.
type redTeamAsk struct {
	rel  string
	task redteam.Task
}

// revalidator checks files of a source again, with runs, as the first check did.
type revalidator func(files []string, runs []*recorded.Run) (*validate.Report, error)

// attack runs the red team over the tasks of rep (the report of source s, checked with runs)
// in which the checks found no error (their warnings stand beside what the red team finds): it asks the model for runs for each, on jobs at once, checks their
// files again with those runs, and gives rep with those files' reports replaced. A red-team
// request that fails for good is model-error on its task.
func (rt *redTeam) attack(ctx context.Context, s *source, pool *isolate.Pool, jobs int, runs []*recorded.Run, rep *validate.Report, again revalidator) (*validate.Report, error) {
	files := s.files
	if files == nil {
		var err error
		if files, err = s.corpus.TaskFiles(); err != nil {
			return nil, err
		}
	}
	relOf := map[string]string{}
	for _, rel := range files {
		relOf[s.corpus.DisplayPath(rel)] = rel
	}
	ok := map[string]bool{} // rel + "\x00" + task
	var todo []string       // rels, in file order
	for _, tr := range rep.Tasks {
		rel, known := relOf[tr.File]
		if !known || tr.Task == "" || tr.Status == "invalid" {
			continue
		}
		if len(todo) == 0 || todo[len(todo)-1] != rel {
			todo = append(todo, rel)
		}
		ok[rel+"\x00"+tr.Task] = true
	}
	if len(todo) == 0 {
		return rep, nil
	}
	var asks []redTeamAsk
	for _, rel := range todo {
		infos, err := isolate.DescribeFile(ctx, pool, s.corpus, rel)
		if err != nil {
			return nil, err
		}
		src, err := s.corpus.ReadSource(rel)
		if err != nil {
			return nil, err
		}
		for _, ti := range infos {
			if ok[rel+"\x00"+ti.Name] {
				asks = append(asks, redTeamAsk{rel, redteam.Task{Name: ti.Name, File: s.corpus.DisplayPath(rel), Source: src,
					Prompts: ti.Prompts, Turns: ti.Turns, Simulated: ti.Simulated, Tools: ti.Tools}})
			}
		}
	}
	got := make([][]*recorded.Run, len(asks))
	failed := make([]error, len(asks))
	sem := make(chan struct{}, max(jobs, 1))
	var wg sync.WaitGroup
	for i, a := range asks {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			r, use, err := redteam.Ask(ctx, rt.chat, a.task, rt.opts, rt.name)
			rt.mu.Lock()
			rt.usage.Add(use)
			rt.tasks++
			rt.mu.Unlock()
			for _, x := range r {
				x.For = a.rel
			}
			got[i], failed[i] = r, err
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	fresh := append([]*recorded.Run(nil), runs...)
	for _, r := range got {
		fresh = append(fresh, r...)
	}
	again2, err := again(todo, fresh)
	if err != nil {
		return nil, err
	}
	for i, a := range asks {
		if failed[i] == nil {
			continue
		}
		for _, tr := range again2.Tasks {
			if tr.Task == a.task.Name && tr.File == a.task.File {
				d := dsl.NewDiag(episode.ModelError, "the red team's request failed for good, so the task was not attacked (this says nothing about the task): "+failed[i].Error())
				d.File, d.Line, d.Col = tr.File, 0, 0
				tr.Diagnostics = append(tr.Diagnostics, d)
			}
		}
	}
	if rt.keep {
		if err := rt.keepRuns(s, asks, got, again2); err != nil {
			return nil, err
		}
	}
	return replaceFiles(rep, again2, todo, s.corpus), nil
}

// keepRuns adds to the runs file of each file the red team's runs of its tasks whose runs all
// behaved (no error, no hackable, no careful-run-fails: the hacks failed, the careful runs
// passed), after the runs the file already holds. A task with a run that misbehaved keeps
// nothing: fix it and ask again.
func (rt *redTeam) keepRuns(s *source, asks []redTeamAsk, got [][]*recorded.Run, rep *validate.Report) error {
	if s.dir == "" {
		return fmt.Errorf("--red-team-keep: the built-in corpus cannot be written to; give its folder")
	}
	clean := map[string]bool{} // display path + "\x00" + task
	for _, tr := range rep.Tasks {
		behaved := tr.Status != "invalid"
		for _, d := range tr.Diagnostics {
			if d.Code == "hackable" || d.Code == "careful-run-fails" {
				behaved = false
			}
		}
		if behaved {
			clean[tr.File+"\x00"+tr.Task] = true
		}
	}
	var order []string
	add := map[string][]*recorded.Run{}
	for i, a := range asks {
		if !clean[a.task.File+"\x00"+a.task.Name] || len(got[i]) == 0 {
			continue
		}
		if _, seen := add[a.rel]; !seen {
			order = append(order, a.rel)
		}
		add[a.rel] = append(add[a.rel], got[i]...)
	}
	for _, rel := range order {
		side := rel + recorded.SidecarSuffix
		var runs []*recorded.Run
		data, err := s.corpus.ReadSource(side)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return fmt.Errorf("%s: %v", s.corpus.DisplayPath(side), err)
		default:
			if runs, err = recorded.Parse(s.corpus.DisplayPath(side), data, recorded.DefaultExpect(side)); err != nil {
				return err
			}
		}
		runs = append(runs, add[rel]...)
		out, err := recorded.Marshal(runs)
		if err != nil {
			return err
		}
		if err := atomicfile.WriteFile(filepath.Join(s.dir, filepath.FromSlash(side)), out); err != nil {
			return err
		}
	}
	return nil
}

// replaceFiles is rep with the reports of the files files (root-relative) replaced by those of
// fresh, in the place of the first, and the summary counted again.
func replaceFiles(rep, fresh *validate.Report, files []string, c *dsl.Corpus) *validate.Report {
	display := map[string]bool{}
	for _, rel := range files {
		display[c.DisplayPath(rel)] = true
	}
	byFile := map[string][]*validate.TaskReport{}
	for _, tr := range fresh.Tasks {
		byFile[tr.File] = append(byFile[tr.File], tr)
	}
	out := &validate.Report{Sources: rep.Sources}
	for k, v := range fresh.Sources {
		if out.Sources == nil {
			out.Sources = map[string][]byte{}
		}
		out.Sources[k] = v
	}
	done := map[string]bool{}
	for _, tr := range rep.Tasks {
		switch {
		case !display[tr.File]:
			out.Tasks = append(out.Tasks, tr)
		case !done[tr.File]:
			done[tr.File] = true
			out.Tasks = append(out.Tasks, byFile[tr.File]...)
		}
	}
	for _, tr := range out.Tasks {
		tr.Status = "ok"
		for _, d := range tr.Diagnostics {
			switch {
			case d.Severity == dsl.Error:
				tr.Status = "invalid"
			case tr.Status == "ok":
				tr.Status = "warn"
			}
		}
		switch tr.Status {
		case "ok":
			out.Summary.OK++
		case "warn":
			out.Summary.Warn++
		default:
			out.Summary.Invalid++
		}
	}
	return out
}
