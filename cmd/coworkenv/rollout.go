package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/progress"
	"github.com/coworkenv/coworkenv/internal/shown"
	"github.com/coworkenv/coworkenv/isolate"
	"github.com/coworkenv/coworkenv/queue"
	"github.com/coworkenv/coworkenv/report"
	"github.com/coworkenv/coworkenv/rollout"
	"github.com/coworkenv/coworkenv/runtime/trace"
)

const rolloutUsage = "rollout [TASKS...] --out DIR [--samples K] [--jobs N] [--seed S] [--vary-setup] [--json] [--agent openai|oracle|noop] [--model NAME] [--in-process|--isolate] [--report FILE.html]\n" +
	"        [--queue URL|embedded [--retry-failed] [--ack-wait D] [--max-deliver N]]\n\n" +
	"Runs K episodes of every task, N at a time, one fresh agent per episode, and writes each as a trace\n" +
	"DIR/<task>/<sample>.jsonl. TASKS are files, folders, file.star:name or task names of the built-in\n" +
	"corpus (default: the whole built-in corpus).\n\n" +
	"Seeds. Every sample of a task runs with the run seed S, so the K samples of a task start from the\n" +
	"same state even when its setup draws from ws.rand: the group that GRPO-style training compares\n" +
	"(export rl groups by task and start state). Tools that draw from ws.rand and injected faults draw\n" +
	"the same for every sample too, so samples differ only by what the agent does: a model's sampling\n" +
	"(--temperature; at 0 a model may repeat itself), never the engine; the oracle gives K identical\n" +
	"traces. --vary-setup runs sample i with the seed S+i instead: samples then start from different\n" +
	"states (more set-ups per task for an evaluation, no longer one group). Each trace records the seed\n" +
	"it ran with, which replay uses.\n\n" +
	"Samples whose trace is already in DIR are read back instead of run, so an interrupted rollout\n" +
	"resumes; DIR/rollout.json records the agent, model and sampling settings, the seed and whether\n" +
	"--vary-setup was given, and a rollout with other settings into the same DIR is refused. A trace\n" +
	"recorded with another version of the task file or of a file it loads (its file_sha256 or sources\n" +
	"differ from the files now) is stale: a warning names the files, the sample runs again, and its new\n" +
	"trace replaces the old one; the summary counts such samples (task_changed).\n" +
	"A sample whose model requests fail for good (after the retries: failed, with the code\n" +
	"model-error) or that Ctrl-C interrupts (interrupted, counted apart from failed) leaves only\n" +
	"DIR/<task>/<sample>.jsonl.partial, whose end records the code, and is run again next time. DIR is\n" +
	"checked before anything runs: a file, an input or a folder that cannot be written is refused.\n\n" +
	"--report FILE.html writes, when the rollout ends (passed or not, interrupted too), the page that\n" +
	"`coworkenv report DIR` writes: the summary as tables and charts and every task with its samples, each\n" +
	"linking to its episode view in FILE-episodes/ beside it. FILE and that folder are checked before\n" +
	"anything runs, as DIR is; the episode views' state changes come from replays in this process.\n\n" +
	"The summary gives per task the pass rate, the mean score, pass@1, pass@K and pass^K (the unbiased\n" +
	"estimators 1-C(n-c,k)/C(n,k) and C(c,k)/C(n,k) over the task's n scored samples, c of them passed),\n" +
	"and the means over tasks overall, for single- and multi-turn tasks, and by capability.\n\n" +
	agentFlagsHelp + "\n\n" + isolationHelp + "\nA sample whose worker stops is failed (its .partial ends with the code) and runs\n" +
	"again next time, like a model-error one.\n\n" +
	"--queue URL publishes every sample without a trace as a job on the NATS JetStream server at URL\n" +
	"instead of running it, and writes the traces that `coworkenv worker --queue URL` processes send back\n" +
	"(docs/scaling.md); every task file then runs in workers (--in-process is refused). A sample whose\n" +
	"job failed is failed again while the queue remembers the job's result (--retry-failed runs such jobs\n" +
	"again). --queue embedded starts the server in this process and runs --jobs workers here.\n\n" +
	queueFlagsHelp + "\n\n" +
	"A task file that does not load is reported and counted (not_loaded), and the other files run.\n\n" +
	splitHelp + " Each trace's start event\nrecords the task's split; the split flags are part of the folder's configuration (rollout.json)."

// rolloutOptions are the options of `coworkenv rollout`.
type rolloutOptions struct {
	streams
	tasks           []string
	samples, jobs   int
	out, report     string
	seed            int64
	varySetup, json bool
	agent           *agentFlags
	iso             *isolation
	queue           *queueRun
	split           *splitFlags
}

func (o *rolloutOptions) flags(fs *flag.FlagSet) {
	o.agent = addAgentFlags(fs, nil)
	o.iso = addIsolationFlags(fs, "episode")
	fs.IntVar(&o.samples, "samples", 1, "episodes per task (K)")
	fs.IntVar(&o.jobs, "jobs", 4, "episodes run at once (for a model: concurrent requests)")
	fs.StringVar(&o.out, "out", "", "folder of the traces (required)")
	fs.Int64Var(&o.seed, "seed", 0, "run seed of every sample (with --vary-setup, of sample 0)")
	fs.BoolVar(&o.varySetup, "vary-setup", false, "run sample i with seed+i, so that samples of a task start from different states")
	fs.BoolVar(&o.json, "json", false, "print the summary as one JSON object")
	o.queue = addQueueRun(fs, "the samples")
	reportFlag(fs, &o.report, "the rollout's summary and samples")
	o.split = addSplitFlags(fs)
}

func (o *rolloutOptions) args(pos []string) error {
	o.tasks = pos
	return nil
}

func runRollout(o *rolloutOptions) error {
	stdout, stderr := o.stdout, o.stderr
	pos, iso := o.tasks, o.iso
	if err := firstError(required(o.out, "--out DIR"), positive("--samples", o.samples), positive("--jobs", o.jobs)); err != nil {
		return err
	}
	if err := checkOutput("--out", o.out, outputFolder, taskFiles(pos)...); err != nil {
		return usage(err)
	}
	if o.report != "" {
		err := checkOutput("--report", o.report, outputFile, append(taskFiles(pos), o.out)...)
		if err == nil {
			err = checkOutput("--report", report.EpisodesDir(o.report), outputFolder, append(taskFiles(pos), o.out)...)
		}
		if err != nil {
			return usage(err)
		}
	}
	if err := iso.check(); err != nil {
		return usage(err)
	}
	if err := o.split.check(); err != nil {
		return err
	}
	queued := o.queue.on()
	var qopts []queue.Option
	if queued {
		var err error
		if qopts, err = o.queue.options(); err != nil {
			return usage(err)
		}
		if *iso.inProcess {
			return usagef("--queue runs every episode in workers; drop --in-process")
		}
		*iso.isolate = true // workers run task files, the built-in corpus's included
	}
	choice, err := o.agent.choose()
	if err != nil {
		return usage(err)
	}
	// The first Ctrl-C stops the rollout cleanly (running episodes end, their traces stay as
	// .partial); a second one kills the process as usual.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		stop()
	}()
	// one pool for the rollout, started when a task needs it: --jobs workers, each running many
	// episodes one at a time
	var pool *isolate.Pool
	defer func() {
		if pool != nil {
			pool.Close()
		}
	}()
	rt := &rolloutTasks{iso: iso, stderr: stderr, pool: func() (*isolate.Pool, error) {
		var err error
		if pool == nil {
			pool, err = iso.pool(o.jobs)
		}
		return pool, err
	}}
	if o.split.on() {
		rt.split = o.split
	}
	if err := firstError(rt.resolve(ctx, pos), rt.err); err != nil {
		return usage(err)
	}
	tasks, notLoaded := rt.tasks, rt.notLoaded
	workers := notLoaded > 0 && !*iso.inProcess // a file from disk was tried in a worker
	for _, t := range tasks {
		if t.Isolated != nil {
			workers = true
			if _, err := rt.pool(); err != nil {
				return usage(err)
			}
		}
	}
	if err := iso.checkUsed(workers || len(tasks) == 0); err != nil {
		return usage(err)
	}
	if len(tasks) == 0 {
		if notLoaded > 0 {
			return failedf("no task to run: %d file%s did not load", notLoaded, pluralS(notLoaded))
		}
		return usagef("no task to run")
	}
	opts := rollout.Options{
		Out: o.out, Samples: o.samples, Jobs: o.jobs, Seed: o.seed, VarySetup: o.varySetup,
		Agent: choice.name, NewAgent: choice.newAgent, Config: choice.manifest(),
		Pool: pool, AgentSpec: choice.spec, Model: choice.cfg,
	}
	if o.split.on() {
		opts.Config.Set("split", jsonv.NewObject("name", o.split.name, "ratio", o.split.ratio, "seed", o.split.seed))
	}
	bar := progress.New(stderr, "rollout", len(tasks)*o.samples)
	defer bar.Close()
	showProgress(bar, &opts, queued)
	warnw := bar.Writer(stderr) // above a terminal's bar
	opts.Warn = func(msg string) { fmt.Fprintf(warnw, "coworkenv rollout: warning: %s\n", msg) }
	var res *rollout.Result
	if queued {
		res, err = runQueued(ctx, *o.queue.url, o.jobs, rt.pool, tasks, opts, qopts...)
	} else {
		res, err = rollout.Run(ctx, tasks, opts)
	}
	bar.Close()
	if err != nil {
		return usage(err)
	}
	var status error
	if res.Failed > 0 || res.Interrupted > 0 || notLoaded > 0 || res.NotPassed() > 0 {
		status = errNegative
	}
	// The report is written before the summary is printed, so that the summary can name it.
	reported := false
	if o.report != "" {
		stop() // a second Ctrl-C while the report is written ends the command
		ro := reportOptionsWith(".", rt.ran)
		ro.Jobs = o.jobs
		closeBar := reportProgress(&ro, stderr)
		err := report.WriteRollout(context.Background(), o.report, res, o.out, ro)
		closeBar()
		if err != nil {
			fmt.Fprintf(stderr, "coworkenv rollout: --report: %v\n", err)
			status = errNegative // the rollout ran; its report is left undone
		} else {
			reported = true
		}
	}
	sum := rollout.Summarize(res)
	if o.json {
		j := sum.JSON()
		j.Set("out", o.out)
		j.Set("not_loaded", int64(notLoaded))
		if reported {
			j.Set("report", o.report)
		}
		fmt.Fprintln(stdout, jsonv.MustEncode(j))
	} else {
		sum.WriteText(stdout)
		if notLoaded > 0 {
			fmt.Fprintf(stdout, "%d task file%s did not load (named on stderr)\n", notLoaded, pluralS(notLoaded))
		}
		fmt.Fprintf(stdout, "traces in %s\n", o.out)
		if reported {
			fmt.Fprintf(stdout, "report in %s (episode views in %s)\n", o.report, report.EpisodesDir(o.report))
		}
	}
	reportFailures(stderr, res)
	return status
}

// showProgress shows a rollout's progress on bar: the samples finished, passed, failed and
// interrupted, and for a queued rollout the samples with a worker and waiting for one
// ("10 passed · 1 failed · 4 running · 20 queued").
func showProgress(bar *progress.Bar, opts *rollout.Options, queued bool) {
	var mu sync.Mutex
	var last rollout.Progress
	var jobs *queue.Progress // nil until the queue tells
	show := func() {
		detail := progressDetail(last)
		if jobs != nil {
			detail += fmt.Sprintf(" · %d running · %d queued", jobs.Running, jobs.Queued)
		}
		bar.Set(last.Done, detail)
	}
	opts.Progress = func(p rollout.Progress) {
		mu.Lock()
		defer mu.Unlock()
		last = p
		show()
	}
	if queued {
		opts.Queue = func(p queue.Progress) {
			mu.Lock()
			defer mu.Unlock()
			jobs = &p
			show()
		}
	}
}

// reportFailures lists the failed samples (without a trace) on stderr, and says how to resume.
func reportFailures(w io.Writer, res *rollout.Result) {
	const most = 10
	n := 0
	for _, tr := range res.Tasks {
		for _, s := range tr.Samples {
			if s.OK() || s.Interrupted {
				continue
			}
			if n < most {
				fmt.Fprintf(w, "coworkenv rollout: %s sample %d failed: %s\n", tr.Task.Name, s.Index, firstLine(s.Err))
			}
			n++
		}
	}
	if n > most {
		fmt.Fprintf(w, "coworkenv rollout: ... and %d more failed samples\n", n-most)
	}
	if res.Interrupted > 0 {
		fmt.Fprintf(w, "coworkenv rollout: interrupted: %d sample%s did not finish; run the same command again to resume\n", res.Interrupted, pluralS(res.Interrupted))
	} else if res.Failed > 0 {
		fmt.Fprintln(w, "coworkenv rollout: failed samples have no trace; run the same command again to retry them")
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

// rolloutTasks resolves TASKS in order, each task once. A file that does not load, named or
// found in a folder, is reported on stderr and skipped (notLoaded counts them). Task files from
// disk are not loaded here unless --in-process: a worker of pool lists their tasks, and their
// episodes run in workers.
type rolloutTasks struct {
	iso       *isolation
	pool      func() (*isolate.Pool, error)
	stderr    io.Writer
	tasks     []rollout.Task
	notLoaded int
	seen      map[string]bool
	support   map[*dsl.Corpus]map[string][]byte
	files     map[string]taskFile // by task name, the file of each task (the first of a name)
	// split, when set, keeps the tasks of one split and records each task's split in its traces
	split *splitFlags
	err   error // the first error of split
}

func (rt *rolloutTasks) resolve(ctx context.Context, args []string) error {
	rt.seen, rt.support, rt.files = map[string]bool{}, map[*dsl.Corpus]map[string][]byte{}, map[string]taskFile{}
	if len(args) == 0 {
		s, err := embedded()
		if err != nil {
			return err
		}
		for _, rel := range s.files {
			if err := rt.file(ctx, s.corpus, rel, "", true); err != nil {
				return err
			}
		}
		return nil
	}
	var builtin *builtinTasks
	for _, arg := range args {
		file, name := splitTaskArg(arg)
		info, statErr := os.Stat(file)
		switch {
		case statErr == nil && info.IsDir():
			s, err := openPath(arg)
			if err != nil {
				return err
			}
			for _, rel := range s.files {
				if err := rt.file(ctx, s.corpus, rel, "", false); err != nil {
					return err
				}
			}
		case file != arg || strings.HasSuffix(arg, ".star"):
			s, err := openPath(file)
			if err != nil {
				return err
			}
			if err := rt.file(ctx, s.corpus, s.files[0], name, false); err != nil {
				return err
			}
		default:
			if builtin == nil {
				builtin = &builtinTasks{}
				if err := builtin.load(ctx); err != nil {
					return err
				}
			}
			bt, ok := builtin.byName[arg]
			if !ok {
				return fmt.Errorf("%s: no such file or folder, and no task of that name in the built-in corpus (see coworkenv list)", arg)
			}
			if err := rt.add(bt.corpus, bt.task, bt.src, true); err != nil {
				return err
			}
		}
	}
	return nil
}

// file adds the tasks of the file rel of c (only the task name, when given); a file that does
// not load is reported and counted.
func (rt *rolloutTasks) file(ctx context.Context, c *dsl.Corpus, rel, name string, builtin bool) error {
	if !rt.iso.isolated(builtin) {
		f := c.LoadFile(ctx, rel)
		tasks := f.Tasks
		if len(f.Diags) == 0 && name != "" {
			t, err := isolate.PickTask(f, name)
			if err != nil {
				return err
			}
			tasks = []*dsl.Task{t}
		}
		if !rt.loaded(c.DisplayPath(rel), f.Diags) {
			return nil
		}
		for _, t := range tasks {
			if err := rt.add(c, t, f.Source, builtin); err != nil {
				return err
			}
		}
		return nil
	}
	ep, err := rt.episode(c, rel)
	if err != nil {
		return err
	}
	pool, err := rt.pool()
	if err != nil {
		return err
	}
	res, err := pool.Run(ctx, isolate.Job{Display: ep.Display, Files: ep.Files, Check: []string{rel}, InfoOnly: true})
	if err != nil {
		return err
	}
	diags := res.Diags
	if res.Stopped != "" {
		diags = res.Report.Tasks[0].Diagnostics
	}
	infos := res.Tasks
	if len(diags) == 0 && name != "" {
		names := make([]string, len(infos))
		for i, ti := range infos {
			names[i] = ti.Name
		}
		i, err := isolate.Pick(c.DisplayPath(rel), nil, names, name)
		if err != nil {
			return err
		}
		infos = infos[i : i+1]
	}
	if !rt.loaded(c.DisplayPath(rel), diags) {
		return nil
	}
	for _, ti := range infos {
		e := *ep
		e.Task = ti.Name
		// the bytes the worker is given; the worker records the sources of its episodes
		rt.push(c, rollout.Task{Task: ti.Stub(rel), Source: ep.Files[rel], Isolated: &e})
	}
	return nil
}

// loaded reports whether a file loaded (a file that declares no task does not). One that did
// not, named by the user or found in a folder, is reported with its diagnostics and counted, and
// the other files run.
func (rt *rolloutTasks) loaded(path string, diags []dsl.Diagnostic) bool {
	if len(diags) == 0 {
		return true
	}
	fmt.Fprintf(rt.stderr, "coworkenv rollout: skipping %s: it does not load:\n", shown.Name(path))
	for _, d := range diags {
		fmt.Fprintf(rt.stderr, "  %s\n", firstLine(d.String()))
	}
	rt.notLoaded++
	return false
}

// add adds a task loaded here, to run here or (--isolate for the built-in corpus) in workers,
// with its sources as they are now, right after its load.
func (rt *rolloutTasks) add(c *dsl.Corpus, t *dsl.Task, src []byte, builtin bool) error {
	sources, err := trace.Sources(c, t.Rel)
	if err != nil {
		return err
	}
	rtask := rollout.Task{Task: t, Source: src, Sources: sources}
	if rt.iso.isolated(builtin) {
		ep, err := rt.episode(c, t.Rel)
		if err != nil {
			return err
		}
		ep.Task = t.Name
		rtask.Isolated = ep
	}
	rt.push(c, rtask)
	return nil
}

// push adds the task t of the corpus c, unless it is there already.
func (rt *rolloutTasks) push(c *dsl.Corpus, t rollout.Task) {
	key := t.Task.File + "\x00" + t.Task.Name
	if rt.split != nil && !rt.seen[key] {
		keep, err := rt.split.keep(c, t.Task.Rel)
		if err == nil {
			t.Split, err = rt.split.record(c, t.Task.Rel)
		}
		if err != nil && rt.err == nil {
			rt.err = err
		}
		if !keep || err != nil {
			return
		}
	}
	if !rt.seen[key] {
		rt.seen[key] = true
		rt.tasks = append(rt.tasks, t)
		if _, dup := rt.files[t.Task.Name]; !dup {
			rt.files[t.Task.Name] = taskFile{c, t.Task.Rel}
		}
	}
}

// taskFile is a task file of a corpus.
type taskFile struct {
	corpus *dsl.Corpus
	rel    string
}

// ran is the task file of the task of that name the rollout ran, for its report
// (reportOptionsWith).
func (rt *rolloutTasks) ran(task string) (*dsl.Corpus, string, bool) {
	f, ok := rt.files[task]
	return f.corpus, f.rel, ok
}

// episode is the worker's episode of the file rel of c.
func (rt *rolloutTasks) episode(c *dsl.Corpus, rel string) (*isolate.Episode, error) {
	support, ok := rt.support[c]
	if !ok {
		var err error
		if support, err = isolate.Support(c); err != nil {
			return nil, err
		}
		rt.support[c] = support
	}
	files, err := isolate.FilesFor(c, support, rel)
	if err != nil {
		return nil, err
	}
	return &isolate.Episode{Display: c.Display, Files: files, File: rel}, nil
}

// builtinTasks is the built-in corpus by task name, loaded once.
type builtinTasks struct {
	byName map[string]builtinTask
}

type builtinTask struct {
	corpus *dsl.Corpus
	task   *dsl.Task
	src    []byte
}

func (b *builtinTasks) load(ctx context.Context) error {
	s, err := embedded()
	if err != nil {
		return err
	}
	b.byName = map[string]builtinTask{}
	for _, rel := range s.files {
		f := s.corpus.LoadFile(ctx, rel)
		for _, t := range f.Tasks {
			if _, dup := b.byName[t.Name]; !dup {
				b.byName[t.Name] = builtinTask{s.corpus, t, f.Source}
			}
		}
	}
	return nil
}

// progressDetail is what the progress display tells of a rollout besides the count:
// "10 passed · 1 failed".
func progressDetail(p rollout.Progress) string {
	d := fmt.Sprintf("%d passed", p.Passed)
	if p.Failed > 0 {
		d += fmt.Sprintf(" · %d failed", p.Failed)
	}
	if p.Interrupted > 0 {
		d += fmt.Sprintf(" · %d interrupted", p.Interrupted)
	}
	return d
}
