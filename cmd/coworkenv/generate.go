package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/generator"
	"github.com/coworkenv/coworkenv/internal/progress"
	"github.com/coworkenv/coworkenv/isolate"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
)

const generateUsage = `generate --capability NAME...|all --count N --out DIR [--corpus DIR] [--max-rounds 4] [--jobs J] [--seed S]
       [--mix NAME=W,... | --all-of] [--combine 1] [--budget-tokens N]
       [--model M] [--base-url U] [--temperature T] [--max-tokens N] [--record FILE | --replay FILE]
       [--stand-ins-only] [--json] [--queue URL|embedded] [--no-red-team] [--red-team-hacks 4] [--red-team-careful 2]

Writes tasks with a model, validates each candidate in an isolated worker process and sends the
diagnostics back until the file is valid with no warning, or --max-rounds answers are spent.
Attempt i uses the seed S+i, which draws its scenario (business, people, situation).
Accepted files go to DIR with a header comment; DIR/manifest.jsonl gets one line per attempt.
Duplicates of the corpus or of earlier tasks (the same source up to comments and layout, or
prompts and setups alike by --near-threshold) are rejected with the name of their twin.
An interrupted run resumes where it stopped when run again with the same flags.

The model is any OpenAI-compatible endpoint: --base-url (default $OPENAI_BASE_URL, else the OpenAI
API) and the key from $OPENAI_API_KEY. --record FILE saves every exchange with the model; --replay
FILE answers from such a cassette instead, offline (with the same flags, the run is reproduced
exactly; --model defaults to the cassette's).

A candidate with a simulated user or a judge is validated twice: offline with its stand-ins, then
with the generation model playing the user and the judge (findings prefixed "with the task
models:" go back to the model like the others). --stand-ins-only validates with the stand-ins
alone.

Once a candidate passes every check, the generation model is its red team (docs/writing-tasks.md,
"The red team"): it writes --red-team-hacks wrong solutions (default 4) and --red-team-careful right
ones in other words (default 2) as recorded runs, once per attempt, and the candidate is checked
with them: a hack that passes (hackable) or a careful run that fails (careful-run-fails) goes back
in the repair prompt with the run, and every later candidate of the attempt is checked against all
of them. The author may answer "careful run N is wrong: REASON" beside the file; the run is then
kept as a hack. An accepted task keeps its runs beside it (TASK.star.runs.json), which every later
validate plays; the manifest and the summary count the red team's requests and tokens apart.
--no-red-team turns it off; --replay takes the red team of the recording.

Every model client of a run (the author, the candidates' simulated users and judges, the red
team) shares one cache: an identical request is sent, and recorded, once; a replay answers a
request by its body. stderr says how many requests the run made and how many the cache answered.

DIR and the cassette of --record are checked before anything runs: a file where a folder belongs
(or the reverse), an input (--corpus, --reference, --replay) or a folder that cannot be written is
refused.

A run that stops early (the model failed, the cassette differs, Ctrl-C) resumes when the same
command runs again; one that ends with fewer tasks accepted than --count exits 1.

` + generateMixHelp + generateQueueHelp

// genList is a repeatable flag that also takes comma-separated values.
type genList []string

func (l *genList) String() string { return strings.Join(*l, ",") }

func (l *genList) Set(s string) error {
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			*l = append(*l, part)
		}
	}
	return nil
}

// generateOptions are the options of `coworkenv generate`.
type generateOptions struct {
	streams
	caps                              genList
	count, maxRounds, jobs, maxTokens int
	out, corpusDir, model, baseURL    string
	record, replay, reference         string
	seed                              int64
	temp                              optFloat
	standInsOnly, json                bool
	near                              float64
	memLimit                          int64
	timeLimit                         time.Duration
	queue                             *queueRun
	genMix
	noRedTeam bool
	redTeam   *redTeamCounts
}

func (o *generateOptions) flags(fs *flag.FlagSet) {
	fs.Var(&o.caps, "capability", "a capability the tasks exercise (repeat the flag, or separate names with commas)")
	fs.IntVar(&o.count, "count", 1, "attempts: each gives at most one task")
	fs.StringVar(&o.out, "out", "", "output folder for the accepted files and manifest.jsonl (required)")
	fs.StringVar(&o.corpusDir, "corpus", "", "corpus root giving the taxonomy, the examples and the tasks to deduplicate against (default: the built-in corpus)")
	fs.IntVar(&o.maxRounds, "max-rounds", generator.DefaultMaxRounds, "answers asked of the model per task, repairs included")
	fs.IntVar(&o.jobs, "jobs", runtime.NumCPU(), "attempts at once, and worker processes")
	fs.Int64Var(&o.seed, "seed", 0, "seed of the first attempt; attempt i uses seed+i")
	fs.StringVar(&o.model, "model", "", "the model name (required, unless --replay gives it)")
	fs.StringVar(&o.baseURL, "base-url", "", "the API's base URL, like http://localhost:8000/v1 (default $OPENAI_BASE_URL, else "+modelagent.DefaultBaseURL+")")
	fs.Var(&o.temp, "temperature", "sampling temperature, sent as given, 0 included (default: the server's)")
	fs.IntVar(&o.maxTokens, "max-tokens", 0, "cap on the tokens of each answer (0: no cap)")
	fs.StringVar(&o.record, "record", "", "save every model exchange to this cassette")
	fs.BoolVar(&o.standInsOnly, "stand-ins-only", false, "validate candidates with the stand-ins of their simulated users and judges only, not with the generation model")
	fs.StringVar(&o.replay, "replay", "", "answer from this cassette instead of the model (offline)")
	fs.StringVar(&o.reference, "reference", "", "put this file in the prompt as the language reference instead of `coworkenv doc` (pins the prompt across versions)")
	fs.Float64Var(&o.near, "near-threshold", generator.DefaultNearThreshold, "similarity of prompt and setup (Jaccard of word 3-grams) from which a task is a near-duplicate")
	fs.Int64Var(&o.memLimit, "memory-limit", isolate.DefaultMemoryLimit>>20, "memory limit of each worker process, in MiB")
	fs.DurationVar(&o.timeLimit, "time-limit", isolate.DefaultTimeLimit, "wall-clock limit of validating one candidate")
	fs.BoolVar(&o.json, "json", false, "print the summary as one JSON object")
	o.queue = addQueueRun(fs, "each attempt")
	o.genMix.flags(fs)
	fs.BoolVar(&o.noRedTeam, "no-red-team", false, "do not ask the model for hacks and careful runs of the candidates that pass every check")
	o.redTeam = addRedTeamCounts(fs)
}

func (o *generateOptions) args(pos []string) error {
	if len(pos) > 0 {
		return usagef("unexpected argument %q (flags only)", pos[0])
	}
	return nil
}

// generateFlags are the flags of the fields of generator.Options, as a generator.FieldError
// names them.
var generateFlags = map[string]string{"Capabilities": "--capability", "Count": "--count", "Out": "--out",
	"Record": "--record", "Replay": "--replay", "Model": "--model", "Seed": "--seed", "BudgetTokens": "--budget-tokens"}

// flagOf is the flag of a field of generator.Options.
func flagOf(field string) string {
	if f, ok := generateFlags[field]; ok {
		return f
	}
	return field
}

func runGenerate(o *generateOptions) error {
	stdout, stderr := o.stdout, o.stderr
	switch {
	case len(o.caps) == 0 && len(o.mix) == 0:
		return usagef("--capability NAME is required (see coworkenv list --capabilities)")
	}
	if err := firstError(required(o.out, "--out DIR"), positive("--count", o.count), positive("--max-rounds", o.maxRounds), positive("--jobs", o.jobs)); err != nil {
		return err
	}
	switch {
	case o.maxTokens < 0:
		return usagef("--max-tokens: %d is negative", o.maxTokens)
	case o.near <= 0 || o.near > 1:
		return usagef("--near-threshold: %v is not in (0, 1]", o.near)
	case o.memLimit < 1:
		return usagef("--memory-limit: %d is not a positive number of MiB", o.memLimit)
	case o.timeLimit <= 0:
		return usagef("--time-limit: %s is not a positive duration", o.timeLimit)
	case o.record != "" && o.replay != "":
		return usagef("--record and --replay cannot be used together")
	}
	if err := checkOutput("--out", o.out, outputFolder, o.corpusDir, o.reference, o.replay); err != nil {
		return usage(err)
	}
	if o.record != "" {
		if err := checkOutput("--record", o.record, outputFile, o.corpusDir, o.reference); err != nil {
			return usage(err)
		}
	}
	opts := generator.Options{
		Capabilities: o.caps, Count: o.count, Out: o.out, MaxRounds: o.maxRounds, Jobs: o.jobs, Seed: o.seed,
		Record: o.record, Replay: o.replay, NearThreshold: o.near, Log: stderr, StandInsOnly: o.standInsOnly,
	}
	if err := o.genMix.apply(&opts); err != nil {
		return err
	}
	if rt, err := o.redTeam.options(); err != nil {
		return usage(err)
	} else if !o.noRedTeam && !rt.Off() {
		opts.RedTeam = &rt
	}
	if o.corpusDir != "" {
		info, err := os.Stat(o.corpusDir)
		if err != nil {
			return usagef("--corpus: %s: %v", o.corpusDir, unwrap(err))
		}
		if !info.IsDir() {
			return usagef("--corpus: %s is not a folder", o.corpusDir)
		}
		if opts.Corpus, err = dsl.OpenDir(o.corpusDir, filepath.ToSlash(filepath.Clean(o.corpusDir))); err != nil {
			return usagef("--corpus: %s: %v", o.corpusDir, unwrap(err))
		}
	}
	if o.reference != "" {
		data, err := os.ReadFile(o.reference)
		if err != nil {
			return usagef("--reference: %v", err)
		}
		opts.Reference = string(data)
	}
	cfg := modelagent.Config{Model: o.model, BaseURL: o.baseURL, MaxTokens: o.maxTokens}
	if o.temp.set {
		t := o.temp.v
		cfg.Temperature = &t
	}
	if o.replay == "" && !o.queue.on() { // with --queue, the workers have the key and the base URL
		cfg = modelagent.FromEnv(cfg, os.Getenv)
		if strings.TrimSpace(cfg.Model) == "" {
			return usagef("--model NAME is required")
		}
		if cfg.APIKey == "" && (cfg.BaseURL == "" || strings.TrimRight(cfg.BaseURL, "/") == modelagent.DefaultBaseURL) {
			return usagef("OPENAI_API_KEY is not set; %s needs it (for a local server, give --base-url or OPENAI_BASE_URL)", modelagent.DefaultBaseURL)
		}
	}
	opts.Model = cfg

	pool, err := isolate.NewPool(isolate.Options{Workers: o.jobs, MemoryLimit: o.memLimit << 20, TimeLimit: o.timeLimit})
	if err != nil {
		return usage(err)
	}
	defer pool.Close()
	opts.Pool = pool

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	bar := progress.New(stderr, "generate", o.count)
	defer bar.Close()
	opts.Log = bar.Writer(stderr)
	gp := &genProgress{bar: bar, count: o.count}
	opts.OnRecord = gp.record
	sum, err := generateOn(ctx, o.queue, opts, gp)
	bar.Close()
	if sum == nil {
		var fe *generator.FieldError
		msg := err.Error()
		switch {
		case errors.As(err, &fe):
			msg = fe.Named(flagOf)
		case errors.Is(err, generator.ErrUsage):
			msg = strings.TrimPrefix(msg, generator.ErrUsage.Error()+": ")
		}
		return usagef("%s", msg)
	}
	if o.json {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		enc.Encode(sum)
	} else {
		sum.WriteText(stdout)
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			err = errors.New("interrupted")
		}
		if errors.Is(err, generator.ErrBudget) {
			return failedf("stopped before attempt %d: it would take the run past --budget-tokens %d (%d spent); the manifest holds %d attempt(s): run again with a larger budget to resume", sum.Attempts+1, o.budget, sum.Tokens.Total, sum.Attempts)
		}
		return failedf("%v; the manifest holds %d attempt(s): run the same command again to resume", err, sum.Attempts)
	}
	if r := sum.Requests; r != nil && r.Asked > 0 {
		fmt.Fprintf(stderr, "model requests: %d, %d sent (%d answered from the run's cache, %d tokens not paid again); the answers sent: %d prompt + %d completion tokens, the simulated users' and judges' included\n",
			r.Asked, r.Sent, r.Asked-r.Sent, r.SavedTokens, r.PromptTokens, r.CompletionTokens)
	}
	fmt.Fprintf(stderr, "done in %s\n", time.Since(start).Round(time.Millisecond))
	if sum.Accepted < o.count {
		return failedf("%d of %d task%s accepted", sum.Accepted, o.count, pluralS(o.count))
	}
	return nil
}
