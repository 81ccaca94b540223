package main

import (
	"context"
	"fmt"
	"go.starlark.net/syntax"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/trace"
)

const runUsage = "run TASK [--agent oracle|noop|openai] [--model NAME] [--seed N] [--json] [--trace FILE]\n\n" +
	"TASK is a file, file.star:name, or a task name of the built-in corpus. The trace is written to FILE.partial\n" +
	"and renamed to FILE when the episode ends; an interrupted episode (Ctrl-C) leaves FILE.partial, its end\n" +
	"recording the code interrupted. FILE is checked before the episode runs: a folder, the task file or a\n" +
	"folder that cannot be written is refused. An episode stopped by the model's endpoint (unreachable, or an\n" +
	"HTTP error after the retries) ends with the code model-error.\n" + agentFlagsHelp +
	"\nExit status: 0 passed, 1 not passed (model-error and interrupted included), 2 bad usage (--trace included)\n" +
	"or a task that does not load."

func cmdRun(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("run", runUsage, stderr)
	agentFlags := addAgentFlags(fs)
	seed := fs.Int64("seed", 0, "run seed, mixed with the task's seed (0 keeps the task's seed)")
	asJSON := fs.Bool("json", false, "print the end result as one JSON object instead of the transcript")
	tracePath := fs.String("trace", "", "write the episode as a JSON Lines trace to this file")
	pos, code, ok := parse(fs, runUsage, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintf(stderr, "coworkenv run: want one TASK, got %d arguments\n", len(pos))
		return 2
	}
	if *tracePath != "" {
		if err := checkOutput("--trace", *tracePath, outputFile, taskFiles(pos)...); err != nil {
			fmt.Fprintf(stderr, "coworkenv run: %v\n", err)
			return 2
		}
	}
	choice, err := agentFlags.choose()
	if err != nil {
		fmt.Fprintf(stderr, "coworkenv run: %v\n", err)
		return 2
	}
	choice.onRetry = func(attempt int, delay time.Duration, reason error) {
		fmt.Fprintf(stderr, "coworkenv run: model request failed (%v); retry %d in %s\n", reason, attempt, delay.Round(time.Millisecond))
	}
	// Ctrl-C cancels the episode: it ends with an error, and its trace keeps an end event.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	corp, task, err := resolveTask(ctx, pos[0])
	if err != nil {
		fmt.Fprintf(stderr, "coworkenv run: %v\n", err)
		return 2
	}
	// print() in any script of the task shows in the transcript (on stderr with --json)
	printTo := stdout
	if *asJSON {
		printTo = stderr
	} else {
		fmt.Fprintf(stdout, "task %s (%s) · agent %s · seed %d\n", task.Name, task.File, choice.name, episode.EffectiveSeed(task.Seed, *seed))
	}
	p, d := episode.Prepare(ctx, task, episode.Options{Seed: *seed, Print: func(pos syntax.Position, msg string) {
		fmt.Fprintf(printTo, "  print %s: %s\n", pos, msg)
	}})
	if d != nil {
		fmt.Fprintf(stderr, "coworkenv run: %s\n", d)
		if d.Code == episode.Interrupted {
			return 1
		}
		return 2
	}
	agent, system, err := choice.newAgent(p)
	if err != nil {
		fmt.Fprintf(stderr, "coworkenv run: %v\n", err)
		return 2
	}
	var observers episode.Observers
	if !*asJSON {
		observers = append(observers, &transcript{w: stdout, task: task})
	}
	var tf *traceFile
	if *tracePath != "" {
		src, err := corp.ReadSource(task.Rel)
		if err != nil {
			fmt.Fprintf(stderr, "coworkenv run: %v\n", err)
			return 2
		}
		start := trace.StartOf(p, src, *seed, agent.Name())
		start.System = system
		tf, err = createTrace(*tracePath, start)
		if err != nil {
			fmt.Fprintf(stderr, "coworkenv run: --trace: %v\n", err)
			return 2
		}
		observers = append(observers, tf.w)
	}
	res := p.Run(ctx, agent, episode.RunOptions{Observer: observers})
	interrupted := res.Err != nil && res.Err.Code == episode.Interrupted
	if tf != nil && interrupted {
		if err := tf.finishPartial(res); err != nil {
			fmt.Fprintf(stderr, "coworkenv run: --trace: %v\n", err)
		}
	} else if tf != nil {
		if err := tf.finish(res); err != nil {
			fmt.Fprintf(stderr, "coworkenv run: --trace: %v\n", err)
			return 2
		}
	}
	if *asJSON {
		fmt.Fprintln(stdout, jsonv.MustEncode(trace.Object(trace.EndOf(res))))
	} else {
		printEnd(stdout, res)
	}
	if res.Err != nil {
		fmt.Fprintf(stderr, "%s\n", res.Err)
	}
	if interrupted && tf != nil {
		fmt.Fprintf(stderr, "coworkenv run: interrupted; the trace so far is in %s.partial\n", *tracePath)
	}
	if res.Passed {
		return 0
	}
	return 1
}

// transcript prints an episode as it happens.
type transcript struct {
	w    io.Writer
	task *dsl.Task
}

func (t *transcript) OnUser(turn int, content, state, now string) {
	fmt.Fprintf(t.w, "\n── turn %d of %d ──\nuser: %s\n", turn+1, len(t.task.Turns), content)
}

func (t *transcript) OnAssistant(turn int, content string, toolCalls []jsonv.Value, usage *jsonv.Object) {
	if content != "" && len(toolCalls) > 0 {
		fmt.Fprintf(t.w, "  (assistant: %s)\n", shorten(content, 160))
	}
}

func (t *transcript) OnCall(c *episode.Call) {
	fmt.Fprintf(t.w, "  → %s %s\n", c.Name, shorten(jsonv.MustEncode(c.Args), 160))
}

func (t *transcript) OnResult(c *episode.Call) {
	switch {
	case c.Fault:
		fmt.Fprintf(t.w, "    ✗ fault: %s\n", c.Error)
	case c.IsError:
		fmt.Fprintf(t.w, "    ✗ error: %s\n", c.Error)
	default:
		fmt.Fprintf(t.w, "    ← %s\n", shorten(c.Content, 160))
	}
}

func (t *transcript) OnReply(turn int, content string) {
	fmt.Fprintf(t.w, "assistant: %s\n", content)
}

func (t *transcript) OnTurnEnd(tr *episode.TurnResult) {
	printItems(t.w, tr.Items)
	if tr.Truncated {
		fmt.Fprintf(t.w, "  (turn truncated at max_calls_per_turn)\n")
	}
	if tr.Score != nil {
		fmt.Fprintf(t.w, "turn score %s\n", episode.FormatScore(*tr.Score))
	}
}

func printEnd(w io.Writer, r *episode.Result) {
	var final []dsl.CheckItem
	for _, it := range r.Items {
		if it.Turn == nil {
			final = append(final, it)
		}
	}
	if len(final) > 0 {
		fmt.Fprintln(w, "\n── final verifier ──")
		printItems(w, final)
	}
	verdict := "not passed"
	switch {
	case r.Passed:
		verdict = "passed"
	case r.Err != nil && episode.Inconclusive(r.Err.Code):
		verdict = r.Err.Code // interrupted, model-error: nothing was judged
	}
	fmt.Fprintf(w, "\nscore %s (completion %s, safety %s, robustness %s) · %s\n",
		episode.FormatScore(r.Score), episode.FormatScore(r.Completion), episode.FormatScore(r.Safety), episode.FormatScore(r.Robustness), verdict)
}

func printItems(w io.Writer, items []dsl.CheckItem) {
	for _, it := range items {
		mark := "✓"
		if !it.Passed {
			mark = "✗"
		}
		extra := ""
		if it.Kind == "check" && it.Weight != 1 {
			extra = fmt.Sprintf(" (weight %s)", episode.FormatScore(it.Weight))
		}
		fmt.Fprintf(w, "  %s %-6s %s%s\n", mark, it.Kind, it.Message, extra)
	}
}

func shorten(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", "\\n")
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
