// Package generator synthesises tasks with a model (`coworkenv generate`): for each wanted task it builds a
// prompt from the language reference, the capability descriptions, corpus examples and a
// scenario drawn from the seed; asks the model for one Starlark file; validates the candidate in
// an isolated worker (one with a simulated user or a judge with their stand-ins, then with the
// model answering for them too); sends the diagnostics back until the file is clean or the
// rounds are spent; rejects duplicates of the corpus and of earlier tasks; and writes the
// accepted files and a manifest that lets a killed run resume.
//
// Attempt i of a run uses the seed Seed+i. Attempts run side by side (Jobs at once) but are
// committed in attempt order, and attempt i sees, as "already written", exactly the tasks
// accepted by attempts up to i-Jobs; so the output depends only on the flags and the model's
// answers, never on timing, and a resumed run writes what an uninterrupted one would have.
package generator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/coworkenv/coworkenv/corpus"
	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/generator/cassette"
	"github.com/coworkenv/coworkenv/internal/atomicfile"
	"github.com/coworkenv/coworkenv/internal/refdoc"
	"github.com/coworkenv/coworkenv/internal/reqcache"
	"github.com/coworkenv/coworkenv/isolate"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
	"github.com/coworkenv/coworkenv/runtime/recorded"
	"github.com/coworkenv/coworkenv/validate/redteam"
	openai "github.com/sashabaranov/go-openai"
)

// Defaults of Options.
const (
	DefaultMaxRounds     = 4
	DefaultNearThreshold = 0.5
)

// DuplicateCode is the code of the diagnostic that rejects a duplicate. It never goes back to
// the model: a duplicate is rejected at once, with the name of its twin.
const DuplicateCode = "duplicate"

// Options of a run.
type Options struct {
	// Capabilities is the pool the attempts draw from (at least one; each must be in the corpus
	// taxonomy when the corpus has one; AllCapabilities alone is the whole taxonomy). Each
	// attempt draws a primary capability and up to Combine others (see mixPlan); with AllOf,
	// every task must exercise all of them.
	Capabilities []string
	// Weights weigh the primary draw (`--mix`); capabilities not named weigh 1. Without them
	// the primaries go round robin. With no Capabilities, the names of Weights are the pool.
	Weights []Weight
	// Combine is the most capabilities an attempt draws besides its primary one (0:
	// DefaultCombine; negative: none).
	Combine int
	// AllOf asks every attempt for every capability of the pool (no draw).
	AllOf bool
	// BudgetTokens, when positive, stops the run (with ErrBudget, resumable) before an attempt
	// that would take the tokens of the manifest past it (see budgetStop).
	BudgetTokens int
	// Count is the number of attempts of the run (each gives at most one task).
	Count int
	// Out is the output folder.
	Out string
	// Corpus gives the taxonomy, the examples and the tasks to deduplicate against (default:
	// the built-in corpus). It is trusted: its tasks are loaded in this process.
	Corpus *dsl.Corpus
	// MaxRounds is the most answers asked of the model per attempt (default DefaultMaxRounds).
	MaxRounds int
	// Jobs is how many attempts run at once (default: the pool's size).
	Jobs int
	// Seed of attempt 0.
	Seed int64
	// Pool validates the candidates (required).
	Pool *isolate.Pool
	// Model configures the endpoint (Model is required unless Replay gives it). It also answers
	// for the simulated users and judges of a candidate when the validator checks it with models
	// (validate.Options.Models), unless StandInsOnly: its requests are then made from this
	// process, with the key, and recorded in and replayed from the cassette like the others.
	Model modelagent.Config
	// StandInsOnly validates the candidates with the stand-ins of their simulated users and
	// judges only, as `coworkenv validate` without models does.
	StandInsOnly bool
	// Record writes every model exchange to this cassette; Replay answers from one instead of
	// the endpoint.
	Record, Replay string
	// Reference is the language reference put in the prompt (default: refdoc.Markdown(), what
	// `coworkenv doc` prints).
	Reference string
	// NearThreshold is the Jaccard similarity of prompt and setup from which a task is a
	// near-duplicate (default DefaultNearThreshold).
	NearThreshold float64
	// SkeletonDedup rejects a task whose skeleton (skeletonOf: the tools of its solution and
	// the kinds of its checks) is that of a task accepted before in the run.
	SkeletonDedup bool
	// Log, when set, gets one line per attempt.
	Log io.Writer
	// OnRecord, when set, is called after each attempt is committed to the manifest.
	OnRecord func(Record)
	// RedTeam, when set, asks the model for hacks and careful runs of each candidate that passes
	// every check (redteam.go), once per attempt; nil: no red team. A replay takes the red team
	// of its cassette's recording instead.
	RedTeam *redteam.Options
}

// Summary is the outcome of a run (of every attempt in the manifest, resumed ones included).
type Summary struct {
	Attempts      int            `json:"attempts"`
	Accepted      int            `json:"accepted"`
	FirstTry      int            `json:"first_try"`
	Rejected      int            `json:"rejected"`
	MeanRounds    float64        `json:"mean_rounds"`     // over accepted tasks
	MeanRoundsAll float64        `json:"mean_rounds_all"` // over all attempts
	Rejections    map[string]int `json:"rejections"`      // rejected attempts per diagnostic code
	Tokens        Tokens         `json:"tokens"`
	// TokensPerAccepted is Tokens.Total over the accepted tasks (0 when none was).
	TokensPerAccepted int `json:"tokens_per_accepted"`
	// Coverage is the coverage table: per capability, how often it was asked for and with what
	// outcome.
	Coverage []CoverageRow `json:"coverage"`
	// Budget is the token budget, when the run had one; BudgetStop says the budget stopped it.
	Budget     int  `json:"budget_tokens,omitempty"`
	BudgetStop bool `json:"budget_stop,omitempty"`
	// RedTeam counts the red team's requests and tokens over every attempt (not in Tokens).
	RedTeam RedTeamSummary `json:"red_team"`
	// Requests counts the HTTP requests of this run's model clients (not of resumed attempts),
	// and those of them sent to the model: the others were answered from the run's cache. nil
	// for a run on a queue (its workers send them).
	Requests *reqcache.Stats `json:"requests,omitempty"`
	Resumed  int             `json:"resumed"` // attempts found done in the manifest
	Out      string          `json:"out"`
	Manifest string          `json:"manifest"`
}

// WriteText prints the summary for people.
func (s *Summary) WriteText(w io.Writer) {
	fmt.Fprintf(w, "%d attempt%s: %d accepted (%d first try), %d rejected", s.Attempts, plural(s.Attempts), s.Accepted, s.FirstTry, s.Rejected)
	if s.Resumed > 0 {
		fmt.Fprintf(w, "; %d resumed from the manifest", s.Resumed)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "mean rounds: %s per accepted task, %s per attempt\n", fmtFloat(s.MeanRounds), fmtFloat(s.MeanRoundsAll))
	if len(s.Rejections) > 0 {
		var codes []string
		for c := range s.Rejections {
			codes = append(codes, c)
		}
		sort.Slice(codes, func(i, j int) bool {
			if s.Rejections[codes[i]] != s.Rejections[codes[j]] {
				return s.Rejections[codes[i]] > s.Rejections[codes[j]]
			}
			return codes[i] < codes[j]
		})
		var parts []string
		for _, c := range codes {
			parts = append(parts, fmt.Sprintf("%s %d", c, s.Rejections[c]))
		}
		fmt.Fprintf(w, "rejections by code: %s\n", strings.Join(parts, ", "))
	}
	fmt.Fprintf(w, "tokens: %d prompt + %d completion = %d", s.Tokens.Prompt, s.Tokens.Completion, s.Tokens.Total)
	if s.Accepted > 0 {
		fmt.Fprintf(w, "; %d per accepted task", s.TokensPerAccepted)
	}
	if s.Budget > 0 {
		fmt.Fprintf(w, "; budget %d", s.Budget)
		if s.BudgetStop {
			w.Write([]byte(", reached"))
		}
	}
	fmt.Fprintln(w)
	if s.RedTeam.Requests > 0 {
		fmt.Fprintf(w, "red team: %d request%s, %d prompt + %d completion = %d tokens; %d hack%s and %d careful run%s written, %d kept beside accepted tasks\n",
			s.RedTeam.Requests, plural(s.RedTeam.Requests), s.RedTeam.Tokens.Prompt, s.RedTeam.Tokens.Completion, s.RedTeam.Tokens.Total,
			s.RedTeam.Hacks, plural(s.RedTeam.Hacks), s.RedTeam.Careful, plural(s.RedTeam.Careful), s.RedTeam.Kept)
	}
	if len(s.Coverage) > 1 || (len(s.Coverage) == 1 && s.Coverage[0].Asked != s.Attempts) {
		fmt.Fprintln(w, "coverage:")
		WriteCoverage(w, s.Coverage)
	}
	fmt.Fprintf(w, "output: %s (manifest %s)\n", s.Out, s.Manifest)
}

func fmtFloat(f float64) string {
	s := fmt.Sprintf("%.2f", f)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}

func round2(f float64) float64 { return math.Round(f*100) / 100 }

// summarize computes the summary of the manifest's records.
func summarize(recs []Record) *Summary {
	s := &Summary{Rejections: map[string]int{}}
	accRounds := 0
	allRounds := 0
	for _, r := range recs {
		s.Attempts++
		allRounds += r.Rounds
		s.Tokens.add(r.Tokens)
		if rt := r.RedTeam; rt != nil {
			s.RedTeam.Requests += rt.Requests
			s.RedTeam.Tokens.add(rt.Tokens)
			s.RedTeam.Hacks += rt.Hacks
			s.RedTeam.Careful += rt.Careful
			if rt.Runs != "" && r.Status == "accepted" {
				s.RedTeam.Kept++
			}
		}
		if r.Status == "accepted" {
			s.Accepted++
			accRounds += r.Rounds
			if r.Rounds == 1 {
				s.FirstTry++
			}
			continue
		}
		s.Rejected++
		seen := map[string]bool{}
		for _, d := range r.Diagnostics {
			if !seen[d.Code] {
				seen[d.Code] = true
				s.Rejections[d.Code]++
			}
		}
	}
	if s.Accepted > 0 {
		s.MeanRounds = round2(float64(accRounds) / float64(s.Accepted))
		s.TokensPerAccepted = s.Tokens.Total / s.Accepted
	}
	if s.Attempts > 0 {
		s.MeanRoundsAll = round2(float64(allRounds) / float64(s.Attempts))
	}
	return s
}

// gen is one run.
type gen struct {
	opts     Options
	tax      *dsl.Taxonomy
	support  map[string][]byte // capabilities.star for the candidate's worker
	system   string
	examples []example
	corpus   []*entry
	names    map[string]string // task names of the corpus → where

	mu       sync.Mutex
	logMu    sync.Mutex        // serialises writes to opts.Log
	accepted []*entry          // in attempt order
	desc     map[string]string // accepted task → description
	client   *http.Client
	// models answer for the simulated users and judges of the candidates in validation (the
	// model of the run); nil with StandInsOnly.
	models *isolate.TaskModels
	// mix draws what each attempt is asked for.
	mix *mixPlan
	// ref is the language reference in parts.
	ref *reference
	// cache answers the identical requests of every model client of the run once.
	cache *reqcache.Cache
}

// ErrUsage marks errors in the options (the command line exits 2 on them).
var ErrUsage = errors.New("usage")

func usageErr(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrUsage, fmt.Sprintf(format, a...))
}

// FieldError is an error about fields of Options. Its message names them as fields ("Model is
// required"); Named names them otherwise, as a command line names its flags ("--model is
// required"). A FieldError of the options themselves is a usage error (errors.Is ErrUsage).
type FieldError struct {
	// Fields are the fields the error is about, in the order the message names them.
	Fields []string
	format string // the message: %[1]s... for the fields, then the other values
	args   []any
	usage  bool
}

// fieldErr is a FieldError: format names fields by %[i]s (i from 1), then a's values.
func fieldErr(usage bool, fields []string, format string, a ...any) *FieldError {
	return &FieldError{Fields: fields, format: format, args: a, usage: usage}
}

func (e *FieldError) Error() string { return e.Named(func(field string) string { return field }) }

// Named is the message with each field named name(field).
func (e *FieldError) Named(name func(field string) string) string {
	vals := make([]any, 0, len(e.Fields)+len(e.args))
	for _, f := range e.Fields {
		vals = append(vals, name(f))
	}
	return fmt.Sprintf(e.format, append(vals, e.args...)...)
}

// Is makes a usage FieldError an ErrUsage.
func (e *FieldError) Is(target error) bool { return e.usage && target == ErrUsage }

// Run generates tasks. It returns the summary of the whole manifest; an error stops the run
// (a model that cannot be reached, a cassette mismatch, ctx done) after the attempts committed
// so far, and running the same options again resumes.
func Run(ctx context.Context, opts Options) (*Summary, error) {
	g, start, records, mw, closeFn, err := begin(ctx, &opts)
	if err != nil {
		return nil, err
	}
	defer closeFn()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type slot struct {
		done chan struct{}
		rec  *outcome
		err  error
	}
	n := opts.Count - start
	if n < 0 {
		n = 0
	}
	slots := make([]*slot, n)
	committed := make([]chan struct{}, n)
	for k := range slots {
		slots[k] = &slot{done: make(chan struct{})}
		committed[k] = make(chan struct{})
	}
	// go[k] says attempt start+k may ask the model within the budget. It is decided from the
	// attempts committed before it starts (the first Jobs from the resumed ones, attempt
	// start+k+Jobs when start+k is committed), so it depends on the tokens alone; once an
	// attempt may not go, none after it may.
	goOn := make([]bool, n)
	budgetHit := false
	decide := func(k int, inflight int) {
		if k < n {
			budgetHit = budgetHit || budgetStop(records, inflight, opts.BudgetTokens)
			goOn[k] = !budgetHit
		}
	}
	for k := 0; k < n && k < opts.Jobs; k++ {
		decide(k, k)
	}
	var wg sync.WaitGroup
	for k := 0; k < n; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(slots[k].done)
			i := start + k
			if w := k - opts.Jobs; w >= 0 {
				select {
				case <-committed[w]:
				case <-ctx.Done():
					slots[k].err = ctx.Err()
					return
				}
			}
			if !goOn[k] {
				slots[k].err = ErrBudget
				return
			}
			slots[k].rec, slots[k].err = g.attempt(ctx, i, g.snapshot(i-opts.Jobs))
		}()
	}
	var runErr error
	for k := 0; k < n; k++ {
		<-slots[k].done
		if err := ctx.Err(); err != nil {
			runErr = err
			break
		}
		if slots[k].err != nil {
			runErr = slots[k].err
			break
		}
		rec, err := g.commit(slots[k].rec, mw)
		if err != nil {
			runErr = err
			break
		}
		records = append(records, *rec)
		g.logRecord(rec)
		if opts.OnRecord != nil {
			opts.OnRecord(*rec)
		}
		decide(k+opts.Jobs, opts.Jobs-1)
		close(committed[k])
	}
	cancel()
	wg.Wait()
	sum := summarize(records)
	sum.Coverage = Coverage(records, g.mix.Pool)
	sum.Budget, sum.BudgetStop = opts.BudgetTokens, errors.Is(runErr, ErrBudget)
	sum.Resumed = start
	sum.Out = opts.Out
	sum.Manifest = filepath.Join(opts.Out, ManifestFile)
	st := g.cache.Stats()
	sum.Requests = &st
	if runErr != nil {
		return sum, runErr
	}
	return sum, nil
}

// begin sets a run up (setup) and opens its manifest for appending; closeFn closes both.
func begin(ctx context.Context, opts *Options) (g *gen, start int, records []Record, mw *manifestWriter, closeFn func(), err error) {
	g, start, records, closeSetup, err := setup(ctx, opts)
	if err != nil {
		return nil, 0, nil, nil, nil, err
	}
	if mw, err = openManifest(opts.Out); err != nil {
		closeSetup()
		return nil, 0, nil, nil, nil, err
	}
	return g, start, records, mw, func() { mw.Close(); closeSetup() }, nil
}

// setup checks the options, loads the corpus, reads the manifest of an earlier run and
// prepares the model client.
func setup(ctx context.Context, opts *Options) (g *gen, start int, records []Record, closeFn func(), err error) {
	if len(opts.Capabilities) == 0 {
		for _, w := range opts.Weights {
			opts.Capabilities = append(opts.Capabilities, w.Name)
		}
	}
	if len(opts.Capabilities) == 0 {
		return nil, 0, nil, nil, fieldErr(true, []string{"Capabilities"}, "at least one %[1]s is required")
	}
	if opts.Count < 1 {
		return nil, 0, nil, nil, fieldErr(true, []string{"Count"}, "%[1]s must be at least 1")
	}
	if opts.Out == "" {
		return nil, 0, nil, nil, fieldErr(true, []string{"Out"}, "%[1]s is required")
	}
	if opts.Pool == nil {
		return nil, 0, nil, nil, errors.New("generator: no worker pool")
	}
	if opts.MaxRounds <= 0 {
		opts.MaxRounds = DefaultMaxRounds
	}
	if opts.Jobs <= 0 {
		opts.Jobs = opts.Pool.Workers()
	}
	if opts.NearThreshold <= 0 {
		opts.NearThreshold = DefaultNearThreshold
	}
	if opts.Reference == "" {
		opts.Reference = refdoc.Markdown()
	}
	if opts.Corpus == nil {
		opts.Corpus = corpus.Open()
	}
	if opts.Record != "" && opts.Replay != "" {
		return nil, 0, nil, nil, fieldErr(true, []string{"Record", "Replay"}, "%[1]s and %[2]s cannot be used together")
	}
	if opts.RedTeam != nil && opts.RedTeam.Off() {
		opts.RedTeam = nil
	}
	g = &gen{opts: *opts, names: map[string]string{}, desc: map[string]string{}, support: map[string][]byte{}}
	g.ref = parseReference(opts.Reference)
	g.system = systemPrompt(g.ref.core())
	c := opts.Corpus
	g.tax = c.Taxonomy()
	if tf := c.TaxonomyFile(); tf != nil && len(tf.Diags) > 0 {
		return nil, 0, nil, nil, fmt.Errorf("the corpus's %s does not load: %s", tf.Path, tf.Diags[0])
	}
	if len(opts.Capabilities) == 1 && opts.Capabilities[0] == AllCapabilities {
		if g.tax == nil || len(g.tax.Capabilities) == 0 {
			return nil, 0, nil, nil, usageErr("capability %q: the corpus declares no capability taxonomy", AllCapabilities)
		}
		opts.Capabilities = nil
		for _, x := range g.tax.Capabilities {
			opts.Capabilities = append(opts.Capabilities, x.Name)
		}
		g.opts.Capabilities = opts.Capabilities
	}
	if g.tax != nil {
		for _, cp := range opts.Capabilities {
			if !g.tax.Has(cp) {
				var names []string
				for _, x := range g.tax.Capabilities {
					names = append(names, x.Name)
				}
				return nil, 0, nil, nil, usageErr("unknown capability %q (the corpus declares %s)", cp, strings.Join(names, ", "))
			}
		}
		data, err := c.ReadSource(dsl.CapabilitiesFile)
		if err != nil {
			return nil, 0, nil, nil, err
		}
		g.support[dsl.CapabilitiesFile] = data
	}
	taskCaps, err := g.loadCorpus(ctx)
	if err != nil {
		return nil, 0, nil, nil, err
	}
	if g.mix, err = newMixPlan(opts.Capabilities, opts.Weights, opts.Combine, opts.AllOf, cooccurrence(taskCaps)); err != nil {
		return nil, 0, nil, nil, err
	}

	// The model: a cassette in between when asked.
	mc := opts.Model
	var player *cassette.Player
	if opts.Replay != "" {
		player, err = cassette.Load(opts.Replay)
		if err != nil {
			return nil, 0, nil, nil, fieldErr(true, []string{"Replay"}, "%[1]s: %[2]v", err)
		}
		if mc.Model == "" {
			mc.Model = player.Model()
		}
		opts.RedTeam = player.Header().RedTeam // as it was recorded
		g.opts.RedTeam = opts.RedTeam
		if mc.BaseURL == "" {
			mc.BaseURL = "http://cassette.invalid/v1"
		}
		mc.HTTPClient = &http.Client{Transport: player}
		mc.Sleep = func(context.Context, time.Duration) error { return nil }
	}
	if mc.Model == "" {
		return nil, 0, nil, nil, fieldErr(true, []string{"Model"}, "%[1]s is required")
	}
	opts.Model = mc
	g.opts.Model = mc

	if err := os.MkdirAll(opts.Out, 0o755); err != nil {
		return nil, 0, nil, nil, err
	}
	records, err = readManifest(opts.Out)
	if err != nil {
		return nil, 0, nil, nil, err
	}
	for _, r := range records {
		d := g.mix.draw(r.Attempt, opts.Seed+int64(r.Attempt))
		if r.Seed != opts.Seed+int64(r.Attempt) || strings.Join(r.Capabilities, ",") != strings.Join(d.Caps, ",") || (r.Primary != "" && r.Primary != d.Primary) {
			return nil, 0, nil, nil, fieldErr(true, []string{"Seed", "Capabilities", "Out"}, "%[4]s holds attempts of another run (attempt %[5]d: seed %[6]d, capabilities %[7]s, where these options draw %[8]s); resume with the same %[1]s and %[2]s, or use another %[3]s (the mix draws from them too)",
				filepath.Join(opts.Out, ManifestFile), r.Attempt, r.Seed-int64(r.Attempt), strings.Join(r.Capabilities, ","), strings.Join(d.Caps, ","))
		}
	}
	start = len(records)
	if err := g.resume(ctx, records); err != nil {
		return nil, 0, nil, nil, err
	}

	closeFn = func() {}
	if opts.Record != "" {
		base := http.DefaultTransport
		if mc.HTTPClient != nil && mc.HTTPClient.Transport != nil {
			base = mc.HTTPClient.Transport
		}
		rec, err := cassette.NewRecorderWith(opts.Record, start > 0, cassette.Header{Model: mc.Model, RedTeam: opts.RedTeam}, base)
		if err != nil {
			return nil, 0, nil, nil, fieldErr(false, []string{"Record"}, "%[1]s: %[2]v", err)
		}
		client := &http.Client{Transport: rec}
		if mc.HTTPClient != nil {
			cp := *mc.HTTPClient
			cp.Transport = rec
			client = &cp
		}
		g.opts.Model.HTTPClient = client
		closeFn = func() { rec.Close() }
	}
	// Every client of the run shares one cache in front of the cassette: identical requests (the
	// candidates' simulated users and judges, above all) are sent, and recorded, once.
	var next http.RoundTripper
	if g.opts.Model.HTTPClient != nil {
		next = g.opts.Model.HTTPClient.Transport
	}
	g.cache = reqcache.New(next)
	g.opts.Model.HTTPClient = g.cache.Client(g.opts.Model.HTTPClient)
	if _, err := modelagent.NewChat(g.opts.Model); err != nil {
		return nil, 0, nil, nil, usageErr("%v", strings.TrimPrefix(err.Error(), "modelagent: "))
	}
	if !opts.StandInsOnly {
		s := isolate.SettingsOf(g.opts.Model)
		g.models = &isolate.TaskModels{User: s, Judge: s, Base: g.opts.Model}
	}
	return g, start, records, closeFn, nil
}

// loadCorpus loads the corpus's tasks (in this process: the corpus is trusted) for examples,
// names and the duplicate index; it returns the capabilities of each task.
func (g *gen) loadCorpus(ctx context.Context) (taskCaps [][]string, err error) {
	c := g.opts.Corpus
	files, err := c.LoadAll(ctx)
	if err != nil {
		return nil, fmt.Errorf("the corpus: %v", err)
	}
	for _, f := range files {
		// Corpus files are named by their path from the corpus root, so that prompts and the
		// manifest do not depend on where the corpus was given from.
		where := "corpus file " + f.Rel
		src := string(f.Source)
		if len(f.Diags) > 0 || len(f.Tasks) == 0 {
			if src != "" {
				g.corpus = append(g.corpus, &entry{name: f.Rel, where: where, attempt: -1, hash: SourceHash(src)})
			}
			continue
		}
		// The example shows the helpers it loads inline: the model's file cannot load them.
		shown, ierr := InlineLoads(c.ReadSource, f.Rel, f.Source)
		ex := example{path: f.Rel, src: abbreviate(shown, topDefs(f.Source))}
		for i, t := range f.Tasks {
			taskCaps = append(taskCaps, t.Capabilities)
			g.names[t.Name] = where
			for _, cp := range t.Capabilities {
				if !contains(ex.caps, cp) {
					ex.caps = append(ex.caps, cp)
				}
			}
			ti := isolate.Describe(ctx, t, c.Limits(), true)
			e := &entry{name: t.Name, where: where, attempt: -1, shingles: Shingles(dedupText(ti.Prompts, ti.Setup))}
			if i == 0 {
				e.hash = SourceHash(src)
				e.skel = skeletonOf(src)
			}
			g.corpus = append(g.corpus, e)
		}
		if ierr != nil {
			g.logf("corpus file %s is not offered as an example: its helpers cannot be inlined: %v", f.Rel, ierr)
			continue
		}
		g.examples = append(g.examples, ex)
	}
	return taskCaps, nil
}

// resume reads back the accepted files of an earlier run into the duplicate index (through a
// worker: they are generated) and removes files of attempts that were not committed.
func (g *gen) resume(ctx context.Context, records []Record) error {
	done := map[int]bool{}
	for _, r := range records {
		if r.Status != "accepted" {
			continue
		}
		done[r.Attempt] = true
		path := filepath.Join(g.opts.Out, r.File)
		data, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("the manifest lists %s as accepted, but: %v", path, err)
		}
		src := stripHeader(string(data))
		e := &entry{name: r.Task, where: fmt.Sprintf("attempt %d", r.Attempt), attempt: r.Attempt, hash: SourceHash(src), skel: skeletonOf(src)}
		res, err := g.opts.Pool.Run(ctx, isolate.Job{Files: g.candidateFiles(src), Check: []string{CandidateFile}, InfoOnly: true, Setup: true})
		if err != nil {
			return err
		}
		if len(res.Tasks) == 1 {
			e.shingles = Shingles(dedupText(res.Tasks[0].Prompts, res.Tasks[0].Setup))
			g.desc[r.Task] = res.Tasks[0].Description
		}
		g.accepted = append(g.accepted, e)
	}
	entries, err := os.ReadDir(g.opts.Out)
	if err != nil {
		return err
	}
	for _, de := range entries {
		if de.IsDir() || !strings.HasSuffix(de.Name(), ".star") {
			continue
		}
		path := filepath.Join(g.opts.Out, de.Name())
		if a, ok := headerAttempt(path); ok && !done[a] {
			if err := os.Remove(path); err != nil {
				return err
			}
			if err := os.Remove(runsFileOf(path)); err != nil && !os.IsNotExist(err) {
				return err
			}
			g.logf("removed %s: its attempt %d was not committed before the run stopped", path, a)
		}
	}
	return nil
}

func (g *gen) candidateFiles(src string) map[string][]byte {
	files := map[string][]byte{CandidateFile: []byte(src)}
	for k, v := range g.support {
		files[k] = v
	}
	return files
}

// snapshot returns the accepted entries of attempts up to last.
func (g *gen) snapshot(last int) []*entry {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []*entry
	for _, e := range g.accepted {
		if e.attempt <= last {
			out = append(out, e)
		}
	}
	return out
}

// logf writes one progress line; attempts log from several goroutines, so lines are written
// one at a time.
func (g *gen) logf(format string, a ...any) {
	if g.opts.Log != nil {
		g.logMu.Lock()
		defer g.logMu.Unlock()
		fmt.Fprintf(g.opts.Log, format+"\n", a...)
	}
}

func (g *gen) logRecord(r *Record) {
	what := fmt.Sprintf("accepted %s in %d round%s", r.Task, r.Rounds, plural(r.Rounds))
	if r.Status != "accepted" {
		what = fmt.Sprintf("rejected after %d round%s (%s)", r.Rounds, plural(r.Rounds), strings.Join(uniqueCodes(r.Diagnostics), ", "))
		if r.Twin != "" {
			what += ": a duplicate of " + r.Twin
		}
	}
	g.logf("attempt %d/%d (seed %d): %s", r.Attempt+1, g.opts.Count, r.Seed, what)
}

// outcome is the result of an attempt before it is committed.
type outcome struct {
	rec  Record
	runs []*recorded.Run // the red team's runs, kept beside an accepted task
	src  string          // the last candidate
	hash string
	sh   map[uint64]struct{}
	desc string
}

// attempt runs the rounds of attempt i against the accepted tasks it may see.
func (g *gen) attempt(ctx context.Context, i int, seen []*entry) (*outcome, error) {
	seed := g.opts.Seed + int64(i)
	d := g.mix.draw(i, seed)
	out := &outcome{rec: Record{Attempt: i, Seed: seed, Status: "rejected", Capabilities: d.Caps, Primary: d.Primary,
		Model: g.opts.Model.Model, Diagnostics: []dsl.Diagnostic{}, History: [][]string{}}}
	cfg := g.opts.Model
	cfg.JitterSeed = uint64(i) + 1
	chat, err := modelagent.NewChat(cfg)
	if err != nil {
		return nil, err
	}
	ctx = cassette.WithAttempt(ctx, i)
	sentRef := map[int]bool{} // the reference entries this attempt's requests carry
	g.mu.Lock()
	desc := map[string]string{}
	for k, v := range g.desc {
		desc[k] = v
	}
	g.mu.Unlock()
	msgs, lean := g.firstMessages(d, i, seed, seen, desc, sentRef)
	known := append(append([]*entry{}, g.corpus...), seen...)
	var runs []*recorded.Run // the red team's, once asked
	for round := 1; round <= g.opts.MaxRounds; round++ {
		send := msgs
		if round > 1 { // a repair: the first request without its example
			send = append([]openai.ChatCompletionMessage{}, msgs...)
			send[1].Content = lean
		}
		ans, err := chat.Complete(ctx, send)
		if err != nil {
			return nil, err
		}
		out.rec.Rounds = round
		out.rec.Tokens.add(Tokens{ans.Usage.PromptTokens, ans.Usage.CompletionTokens, ans.Usage.TotalTokens})
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: ans.Text})
		code, found := Extract(ans.Text)
		var ev *evaluation
		if !found {
			d := dsl.NewDiag("no-code", "your answer holds no Starlark file: no ```python block, and no code that declares a task")
			ev = &evaluation{diags: []dsl.Diagnostic{d}}
			out.src = ""
		} else {
			if out.rec.RedTeam != nil {
				out.rec.RedTeam.Disputed += disputes(ans.Text, runs)
			}
			ev, err = g.evaluate(ctx, code, known, d.Caps, runs)
			if err != nil {
				return nil, err
			}
			if len(runs) > 0 && ev.task != "" && ev.task != runs[0].Task && ev.twin == nil {
				forTask(runs, ev.task) // renamed: check it again with the runs
				if ev, err = g.evaluate(ctx, code, known, d.Caps, runs); err != nil {
					return nil, err
				}
			}
			if g.opts.RedTeam != nil && out.rec.RedTeam == nil && len(ev.diags) == 0 && ev.twin == nil {
				out.rec.RedTeam = &RedTeamRecord{}
				if runs, err = g.redTeam(ctx, chat, ev, code, out.rec.RedTeam); err != nil {
					return nil, err
				}
				if len(runs) > 0 {
					if ev, err = g.evaluate(ctx, code, known, d.Caps, runs); err != nil {
						return nil, err
					}
				}
			}
			out.src, out.hash, out.sh, out.desc, out.runs = code, ev.hash, ev.shingles, ev.desc, runs
		}
		out.rec.Task = ev.task
		out.rec.MultiTurn = ev.multi
		out.rec.Diagnostics = ev.diags
		out.rec.History = append(out.rec.History, codesOf(ev.diags))
		if ev.twin != nil {
			out.rec.Twin = ev.twin.name
			return out, nil
		}
		if len(ev.diags) == 0 {
			out.rec.Status = "accepted"
			return out, nil
		}
		if round < g.opts.MaxRounds {
			g.logf("  attempt %d (seed %d), round %d: %s; asking for a repair", i+1, seed, round, strings.Join(uniqueCodes(ev.diags), ", "))
			msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser,
				Content: repairPrompt(round, g.opts.MaxRounds, ev.diags, ev.task, []byte(code), ans.FinishReason == string(openai.FinishReasonLength)) + g.namedReference(ev.diags, sentRef)})
		}
	}
	return out, nil
}

// uniqueCodes lists the codes of ds once each, in order.
func uniqueCodes(ds []dsl.Diagnostic) []string {
	var out []string
	for _, d := range ds {
		if !contains(out, d.Code) {
			out = append(out, d.Code)
		}
	}
	return out
}

func codesOf(ds []dsl.Diagnostic) []string {
	out := []string{}
	for _, d := range ds {
		out = append(out, d.Code)
	}
	return out
}

// evaluation is the verdict on one candidate.
type evaluation struct {
	diags    []dsl.Diagnostic
	task     string
	desc     string
	hash     string
	shingles map[uint64]struct{}
	twin     *entry
	multi    bool              // the task has more than one turn or a simulated user
	info     *isolate.TaskInfo // the task's, when the file declares one
}

// evaluate checks a candidate: an exact duplicate first (before running anything), then the
// validator in a worker, a near-duplicate, and the generator's own rules (one task, the wanted
// capabilities, a new name).
func (g *gen) evaluate(ctx context.Context, src string, known []*entry, caps []string, runs []*recorded.Run) (*evaluation, error) {
	ev := &evaluation{hash: SourceHash(src)}
	if e, _ := twin(known, ev.hash, nil, 0); e != nil {
		ev.twin = e
		ev.diags = []dsl.Diagnostic{duplicateDiag(e, -1)}
		return ev, nil
	}
	res, err := g.opts.Pool.Run(ctx, isolate.Job{Files: g.candidateFiles(src), Check: []string{CandidateFile}, Setup: true, Models: g.models, Runs: runs})
	if err != nil {
		return nil, err
	}
	for _, tr := range res.Report.Tasks {
		for _, d := range tr.Diagnostics {
			if d.Code == episode.ModelError {
				// the model failed, not the candidate: the run stops, as on any failure of the
				// model, and resumes with this attempt
				return nil, fmt.Errorf("validating the candidate with the model as its simulated user and judge: %s", d.Message)
			}
		}
		ev.diags = append(ev.diags, tr.Diagnostics...)
	}
	loaded := len(res.Report.Tasks) > 0 && res.Report.Tasks[0].Task != ""
	if len(res.Tasks) > 0 {
		ev.task = res.Tasks[0].Name
		ev.desc = res.Tasks[0].Description
		ev.multi = res.Tasks[0].Turns > 1 || res.Tasks[0].Simulated
		ev.info = &res.Tasks[0]
	}
	if len(res.Tasks) == 1 && res.Tasks[0].Setup != "" {
		ti := res.Tasks[0]
		ev.shingles = Shingles(dedupText(ti.Prompts, ti.Setup))
		if e, sim := twin(known, "", ev.shingles, g.opts.NearThreshold); e != nil {
			ev.twin = e
			ev.diags = []dsl.Diagnostic{duplicateDiag(e, sim)}
			return ev, nil
		}
		if sk := skeletonOf(src); g.skeletonTwin(known, sk) != nil {
			ev.twin = g.skeletonTwin(known, sk)
			ev.diags = []dsl.Diagnostic{skeletonDiag(ev.twin, sk)}
			return ev, nil
		}
	}
	if res.Stopped == "" && (loaded || len(res.Report.Tasks) == 0) {
		ev.diags = append(ev.diags, g.rules(res.Tasks, known, caps)...)
	}
	if ev.diags == nil {
		ev.diags = []dsl.Diagnostic{}
	}
	return ev, nil
}

// rules are the generator's own checks of a file that loaded.
func (g *gen) rules(tasks []isolate.TaskInfo, known []*entry, caps []string) []dsl.Diagnostic {
	var out []dsl.Diagnostic
	at := func(d dsl.Diagnostic, ti isolate.TaskInfo) dsl.Diagnostic {
		d.File, d.Line, d.Col = ti.File, ti.Line, ti.Col
		return d
	}
	switch len(tasks) {
	case 0:
		d := dsl.NewDiag("schema", "the file declares no task: declare exactly one with task(...)")
		d.File = CandidateFile
		return []dsl.Diagnostic{d}
	case 1:
	default:
		var names []string
		for _, t := range tasks {
			names = append(names, t.Name)
		}
		out = append(out, at(dsl.NewDiag("schema", fmt.Sprintf("the file declares %d tasks (%s): write exactly one", len(tasks), strings.Join(names, ", "))), tasks[1]))
	}
	ti := tasks[0]
	var missing []string
	for _, c := range caps {
		if !contains(ti.Capabilities, c) {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		out = append(out, at(dsl.NewDiag("schema", fmt.Sprintf("task: capabilities must include %s (asked for); it lists [%s]", strings.Join(missing, ", "), strings.Join(ti.Capabilities, ", "))), ti))
	}
	for _, t := range tasks {
		if where, ok := g.names[t.Name]; ok {
			out = append(out, at(dsl.NewDiag("schema", fmt.Sprintf("task: name: %q is already used by the corpus (%s): choose another name", t.Name, where)), t))
			continue
		}
		for _, e := range known {
			if e.attempt >= 0 && e.name == t.Name {
				out = append(out, at(dsl.NewDiag("schema", fmt.Sprintf("task: name: %q is already used by a task of this run: choose another name", t.Name)), t))
				break
			}
		}
	}
	return out
}

// duplicateDiag is the diagnostic that rejects a duplicate.
// sim is the near-duplicate similarity, or -1 for a copy of the source.
func duplicateDiag(e *entry, sim float64) dsl.Diagnostic {
	msg := fmt.Sprintf("the file is a copy of task %q (%s) up to comments and layout", e.name, e.where)
	if sim >= 0 {
		msg = fmt.Sprintf("the task is a near-duplicate of %q (%s): their prompts and setups are %.0f%% alike", e.name, e.where, sim*100)
	}
	d := dsl.NewDiag(DuplicateCode, msg)
	d.File = CandidateFile
	return d
}

// commit settles an attempt in attempt order: a last duplicate and name check against the
// tasks accepted since the attempt started, then the file (atomically) and the manifest line.
func (g *gen) commit(o *outcome, mw *manifestWriter) (*Record, error) {
	rec := &o.rec
	if rec.Status == "accepted" {
		g.mu.Lock()
		later := []*entry{}
		for _, e := range g.accepted {
			if e.attempt > rec.Attempt-g.opts.Jobs {
				later = append(later, e)
			}
		}
		g.mu.Unlock()
		sk := skeletonOf(o.src)
		if e, sim := twin(later, o.hash, o.sh, g.opts.NearThreshold); e != nil {
			if e.hash == o.hash {
				sim = -1
			}
			rec.Status, rec.Twin = "rejected", e.name
			rec.Diagnostics = []dsl.Diagnostic{duplicateDiag(e, sim)}
			rec.History[len(rec.History)-1] = []string{DuplicateCode}
		} else if e := g.skeletonTwin(later, sk); e != nil {
			rec.Status, rec.Twin = "rejected", e.name
			rec.Diagnostics = []dsl.Diagnostic{skeletonDiag(e, sk)}
			rec.History[len(rec.History)-1] = []string{DuplicateCode}
		} else {
			for _, e := range later {
				if e.name == rec.Task {
					d := dsl.NewDiag("schema", fmt.Sprintf("task: name: %q is already used by attempt %d of this run", rec.Task, e.attempt))
					d.File = CandidateFile
					rec.Status = "rejected"
					rec.Diagnostics = []dsl.Diagnostic{d}
					rec.History[len(rec.History)-1] = []string{"schema"}
					break
				}
			}
		}
	}
	if rec.Status == "accepted" {
		rec.File = rec.Task + ".star"
		if len(o.runs) > 0 {
			data, err := sidecarOf(o.runs)
			if err != nil {
				return nil, err
			}
			rec.RedTeam.Runs = runsFileOf(rec.File)
			if err := atomicfile.WriteFile(filepath.Join(g.opts.Out, rec.RedTeam.Runs), data); err != nil {
				return nil, err
			}
		}
		if err := atomicfile.WriteFile(filepath.Join(g.opts.Out, rec.File), []byte(header(rec)+o.src)); err != nil {
			return nil, err
		}
	}
	if err := mw.append(rec); err != nil {
		return nil, err
	}
	if rec.Status == "accepted" {
		g.mu.Lock()
		g.accepted = append(g.accepted, &entry{name: rec.Task, where: fmt.Sprintf("attempt %d", rec.Attempt), attempt: rec.Attempt, hash: o.hash, shingles: o.sh, skel: skeletonOf(o.src)})
		g.desc[rec.Task] = o.desc
		g.mu.Unlock()
	}
	return rec, nil
}
