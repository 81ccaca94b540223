package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/coworkenv/coworkenv/export"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/isolate"
	"github.com/coworkenv/coworkenv/rollout"
)

// `coworkenv export tasks` reads tasks, not traces, so it is not one of exportKinds (whose
// command reads, verifies and converts traces): cmdExport hands it its arguments first thing.

const exportTasksUsage = "export tasks [TASKS...] --out FILE [--seeds N] [--in-process|--isolate]\n\n" +
	"Writes a task dataset for RL trainers that run the episodes themselves against coworkenv serve: one\n" +
	"JSON Lines row per task and seed (seeds 0 to N-1, task by task in the order given), atomically to\n" +
	"FILE. TASKS are files, folders, file.star:name or task names of the built-in corpus (default: the\n" +
	"whole built-in corpus). A row holds the prompt (the system message and the first user message, as\n" +
	"the model agent sends them and POST /sessions gives them), tools (the tool schemas as a JSON\n" +
	"string), task, seed, group (the group export rl gives the episodes of that task and seed),\n" +
	"capabilities, session (the body of POST /sessions: {\"task\", \"seed\"}), and the fields the\n" +
	"trainers' loaders want: data_source \"coworkenv\", ability (the task's first capability),\n" +
	"reward_model {style, ground_truth} for verl, env_class and reward_spec {method, ground_truth} for\n" +
	"SkyRL, and extra_info {index, task, seed, group}; TRL takes prompt and hands the other columns to\n" +
	"its environment's reset(). The ground truth is the session as JSON text: the reward comes from the\n" +
	"episode. docs/serve.md (\"A task dataset\") has a row and the loaders.\n\n" +
	"Each row costs the task's setup and the start of its first turn: the episode runs with a model\n" +
	"agent whose first request fails at once (no request leaves the process), and the row is read from\n" +
	"its trace. A task and seed whose setup fails has no row (stderr says why).\n\n" +
	isolationHelp + "\n\n" + splitHelp + " Each row's extra_info then has\n\"split\" and \"family\"."

// exportTasksOptions are the options of `coworkenv export tasks`.
type exportTasksOptions struct {
	streams
	tasks []string
	out   string
	seeds int
	iso   *isolation
	split *splitFlags
}

func (o *exportTasksOptions) flags(fs *flag.FlagSet) {
	fs.StringVar(&o.out, "out", "", "the JSON Lines file to write (required)")
	fs.IntVar(&o.seeds, "seeds", 1, "rows per task: seeds 0 to N-1")
	o.iso = addIsolationFlags(fs, "episode")
	o.split = addSplitFlags(fs)
}

func (o *exportTasksOptions) args(pos []string) error {
	o.tasks = pos
	return nil
}

func runExportTasks(o *exportTasksOptions) error {
	const prefix = "coworkenv export tasks"
	stdout, stderr := o.stdout, o.stderr
	iso := o.iso
	if err := firstError(required(o.out, "--out FILE"), positive("--seeds", o.seeds)); err != nil {
		return err
	}
	if err := checkOutput("--out", o.out, outputFile, taskFiles(o.tasks)...); err != nil {
		return usage(err)
	}
	if err := iso.check(); err != nil {
		return usage(err)
	}
	if err := o.split.check(); err != nil {
		return err
	}
	// Ctrl-C stops the export: nothing is written
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var pool *isolate.Pool
	defer func() {
		if pool != nil {
			pool.Close()
		}
	}()
	rt := &rolloutTasks{iso: iso, stderr: renamed{stderr, "coworkenv rollout:", prefix + ":"}, pool: func() (*isolate.Pool, error) {
		var err error
		if pool == nil {
			pool, err = iso.pool(1)
		}
		return pool, err
	}}
	if o.split.on() {
		rt.split = o.split
	}
	if err := firstError(rt.resolve(ctx, o.tasks), rt.err); err != nil {
		return usage(err)
	}
	if len(rt.tasks) == 0 {
		if rt.notLoaded > 0 {
			return failedf("no task: %d task file%s did not load", rt.notLoaded, pluralS(rt.notLoaded))
		}
		return usagef("no task")
	}
	f, err := export.CreateAtomic(o.out)
	if err != nil {
		return usagef("--out: %v", err)
	}
	rows, missing := 0, 0
	for _, t := range rt.tasks {
		for seed := range int64(o.seeds) {
			e, err := promptEpisode(ctx, rt, t, seed)
			if ctx.Err() != nil {
				f.Abort()
				return failedf("interrupted; %s was not written", o.out)
			}
			var row *jsonv.Object
			if err == nil {
				row, err = export.TaskRow(e, e.RecordedSystem(), t.Task.Capabilities, rows)
			}
			if err != nil {
				missing++
				fmt.Fprintf(stderr, "%s: %s seed %d: no row: %s\n", prefix, t.Task.Name, seed, firstLine(err.Error()))
				continue
			}
			if err := f.WriteLine(row); err != nil {
				f.Abort()
				return failedf("writing %s: %v", o.out, err) // the work ran; its output is left undone
			}
			rows++
		}
	}
	if err := f.Commit(); err != nil {
		return failedf("writing %s: %v", o.out, err)
	}
	fmt.Fprintf(stdout, "export tasks: wrote %d row%s (%d task%s, %d seed%s each) to %s", rows, pluralS(rows),
		len(rt.tasks), pluralS(len(rt.tasks)), o.seeds, pluralS(o.seeds), o.out)
	if missing > 0 {
		fmt.Fprintf(stdout, "; %d without a row", missing)
	}
	if rt.notLoaded > 0 {
		fmt.Fprintf(stdout, "; %d task file%s did not load", rt.notLoaded, pluralS(rt.notLoaded))
	}
	fmt.Fprintln(stdout)
	if missing > 0 || rt.notLoaded > 0 {
		return errNegative
	}
	return nil
}

// promptEpisode runs the episode of t with the seed and export.PromptModel's agent, here or in a
// worker as rollout would, and reads back its trace: what a model would have been sent first.
func promptEpisode(ctx context.Context, rt *rolloutTasks, t rollout.Task, seed int64) (*export.Episode, error) {
	var buf bytes.Buffer
	cfg := export.PromptModel()
	agent := isolate.Agent{Name: "openai"}
	if t.Isolated != nil {
		pool, err := rt.pool()
		if err != nil {
			return nil, err
		}
		ep := *t.Isolated
		agent.Model = isolate.SettingsOf(cfg)
		ep.Seed, ep.Agent, ep.Split = seed, agent, t.Split
		res, err := pool.Episode(ctx, ep, isolate.Host{Trace: &buf, Model: cfg})
		switch {
		case err != nil:
			return nil, err
		case res.Setup != nil:
			return nil, fmt.Errorf("%s", res.Setup)
		case res.Stopped != "" && res.Err != nil:
			return nil, fmt.Errorf("%s", res.Err)
		}
	} else {
		_, setup, err := isolate.RunEpisode(ctx, isolate.Run{Task: t.Task, Source: t.Source, Sources: t.Sources, Seed: seed,
			Agent: agent, Model: cfg, Trace: &buf, Split: t.Split})
		switch {
		case setup != nil:
			return nil, fmt.Errorf("%s", setup)
		case err != nil:
			return nil, err
		}
	}
	return export.Decode(fmt.Sprintf("%s seed %d", t.Task.Name, seed), buf.Bytes())
}

// renamed passes what is written to w with one command's name in it replaced by another's (the
// task resolution of rollout tells of the files it skips under rollout's name).
type renamed struct {
	w        io.Writer
	from, to string
}

func (r renamed) Write(b []byte) (int, error) {
	_, err := r.w.Write(bytes.ReplaceAll(b, []byte(r.from), []byte(r.to)))
	return len(b), err
}
