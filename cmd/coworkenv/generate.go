package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

const generateUsage = `generate --capability NAME... --count N --out DIR [--corpus DIR] [--max-rounds 4] [--jobs J] [--seed S]
       [--model M] [--base-url U] [--temperature T] [--max-tokens N] [--record FILE | --replay FILE]
       [--stand-ins-only] [--json] [--queue URL|embedded]

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

DIR and the cassette of --record are checked before anything runs: a file where a folder belongs
(or the reverse), an input (--corpus, --reference, --replay) or a folder that cannot be written is
refused.

A run that stops early (the model failed, the cassette differs, Ctrl-C) resumes when the same
command runs again; one that ends with fewer tasks accepted than --count exits 1.

` + generateQueueHelp

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

func cmdGenerate(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("generate", generateUsage, stderr)
	var caps genList
	fs.Var(&caps, "capability", "a capability the tasks exercise (repeat the flag, or separate names with commas)")
	count := fs.Int("count", 1, "attempts: each gives at most one task")
	out := fs.String("out", "", "output folder for the accepted files and manifest.jsonl (required)")
	corpusDir := fs.String("corpus", "", "corpus root giving the taxonomy, the examples and the tasks to deduplicate against (default: the built-in corpus)")
	maxRounds := fs.Int("max-rounds", generator.DefaultMaxRounds, "answers asked of the model per task, repairs included")
	jobs := fs.Int("jobs", runtime.NumCPU(), "attempts at once, and worker processes")
	seed := fs.Int64("seed", 0, "seed of the first attempt; attempt i uses seed+i")
	model := fs.String("model", "", "the model name (required, unless --replay gives it)")
	baseURL := fs.String("base-url", "", "the API's base URL, like http://localhost:8000/v1 (default $OPENAI_BASE_URL, else "+modelagent.DefaultBaseURL+")")
	var temp optFloat
	fs.Var(&temp, "temperature", "sampling temperature, sent as given, 0 included (default: the server's)")
	maxTokens := fs.Int("max-tokens", 0, "cap on the tokens of each answer (0: no cap)")
	record := fs.String("record", "", "save every model exchange to this cassette")
	standInsOnly := fs.Bool("stand-ins-only", false, "validate candidates with the stand-ins of their simulated users and judges only, not with the generation model")
	replay := fs.String("replay", "", "answer from this cassette instead of the model (offline)")
	reference := fs.String("reference", "", "put this file in the prompt as the language reference instead of `coworkenv doc` (pins the prompt across versions)")
	near := fs.Float64("near-threshold", generator.DefaultNearThreshold, "similarity of prompt and setup (Jaccard of word 3-grams) from which a task is a near-duplicate")
	memLimit := fs.Int64("memory-limit", isolate.DefaultMemoryLimit>>20, "memory limit of each worker process, in MiB")
	timeLimit := fs.Duration("time-limit", isolate.DefaultTimeLimit, "wall-clock limit of validating one candidate")
	asJSON := fs.Bool("json", false, "print the summary as one JSON object")
	qr := addQueueRun(fs, "each attempt")
	pos, code, ok := parse(fs, generateUsage, args, stdout, stderr)
	if !ok {
		return code
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "coworkenv generate: "+format+"\n", a...)
		return 2
	}
	switch {
	case len(pos) > 0:
		return fail("unexpected argument %q (flags only)", pos[0])
	case len(caps) == 0:
		return fail("--capability NAME is required (see coworkenv list --capabilities)")
	case *out == "":
		return fail("--out DIR is required")
	case *count < 1:
		return fail("--count: %d is not a positive number", *count)
	case *maxRounds < 1:
		return fail("--max-rounds: %d is not a positive number", *maxRounds)
	case *jobs < 1:
		return fail("--jobs: %d is not a positive number", *jobs)
	case *maxTokens < 0:
		return fail("--max-tokens: %d is negative", *maxTokens)
	case *near <= 0 || *near > 1:
		return fail("--near-threshold: %v is not in (0, 1]", *near)
	case *memLimit < 1:
		return fail("--memory-limit: %d is not a positive number of MiB", *memLimit)
	case *timeLimit <= 0:
		return fail("--time-limit: %s is not a positive duration", *timeLimit)
	case *record != "" && *replay != "":
		return fail("--record and --replay cannot be used together")
	}
	if err := checkOutput("--out", *out, outputFolder, *corpusDir, *reference, *replay); err != nil {
		return fail("%v", err)
	}
	if *record != "" {
		if err := checkOutput("--record", *record, outputFile, *corpusDir, *reference); err != nil {
			return fail("%v", err)
		}
	}
	opts := generator.Options{
		Capabilities: caps, Count: *count, Out: *out, MaxRounds: *maxRounds, Jobs: *jobs, Seed: *seed,
		Record: *record, Replay: *replay, NearThreshold: *near, Log: stderr, StandInsOnly: *standInsOnly,
	}
	if *corpusDir != "" {
		info, err := os.Stat(*corpusDir)
		if err != nil {
			return fail("--corpus: %s: %v", *corpusDir, unwrap(err))
		}
		if !info.IsDir() {
			return fail("--corpus: %s is not a folder", *corpusDir)
		}
		if opts.Corpus, err = dsl.OpenDir(*corpusDir, filepath.ToSlash(filepath.Clean(*corpusDir))); err != nil {
			return fail("--corpus: %s: %v", *corpusDir, unwrap(err))
		}
	}
	if *reference != "" {
		data, err := os.ReadFile(*reference)
		if err != nil {
			return fail("--reference: %v", err)
		}
		opts.Reference = string(data)
	}
	cfg := modelagent.Config{Model: *model, BaseURL: *baseURL, MaxTokens: *maxTokens}
	if temp.set {
		t := temp.v
		cfg.Temperature = &t
	}
	if *replay == "" && !qr.on() { // with --queue, the workers have the key and the base URL
		cfg = modelagent.FromEnv(cfg, os.Getenv)
		if strings.TrimSpace(cfg.Model) == "" {
			return fail("--model NAME is required")
		}
		if cfg.APIKey == "" && (cfg.BaseURL == "" || strings.TrimRight(cfg.BaseURL, "/") == modelagent.DefaultBaseURL) {
			return fail("OPENAI_API_KEY is not set; %s needs it (for a local server, give --base-url or OPENAI_BASE_URL)", modelagent.DefaultBaseURL)
		}
	}
	opts.Model = cfg

	pool, err := isolate.NewPool(isolate.Options{Workers: *jobs, MemoryLimit: *memLimit << 20, TimeLimit: *timeLimit})
	if err != nil {
		return fail("%v", err)
	}
	defer pool.Close()
	opts.Pool = pool

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	bar := progress.New(stderr, "generate", *count)
	defer bar.Close()
	opts.Log = bar.Writer(stderr)
	gp := &genProgress{bar: bar, count: *count}
	opts.OnRecord = gp.record
	sum, err := runGenerate(ctx, qr, opts, gp)
	bar.Close()
	if sum == nil {
		msg := err.Error()
		if errors.Is(err, generator.ErrUsage) {
			msg = strings.TrimPrefix(msg, generator.ErrUsage.Error()+": ")
		}
		return fail("%s", msg)
	}
	if *asJSON {
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
		fmt.Fprintf(stderr, "coworkenv generate: %v; the manifest holds %d attempt(s): run the same command again to resume\n", err, sum.Attempts)
		return 1
	}
	fmt.Fprintf(stderr, "done in %s\n", time.Since(start).Round(time.Millisecond))
	if sum.Accepted < *count {
		fmt.Fprintf(stderr, "coworkenv generate: %d of %d task%s accepted\n", sum.Accepted, *count, pluralS(*count))
		return exitNegated
	}
	return exitOK
}
