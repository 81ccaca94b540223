package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/isolate"
	"github.com/coworkenv/coworkenv/rollout"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/session"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/coworkenv/coworkenv/serve"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.starlark.net/syntax"
)

const mcpUsage = "mcp TASK [--seed N] [--trace FILE] [--in-process|--isolate]\n\n" +
	"Serves one episode of TASK over MCP on stdin and stdout (docs/serve.md, \"MCP\"), for a harness that\n" +
	"starts a command: the task's tools, the tool reply (the agent's message to the user, answered with the\n" +
	"user's next message or, at the end, the result), and the resources coworkenv://session/s1/state and\n" +
	"coworkenv://session/s1/result. The server's instructions are the system prompt. TASK is a file,\n" +
	"file.star:name, or a task name of the built-in corpus, as for run. " + serveIsolationHelp + "\n" +
	"stdout carries the protocol and nothing else; stderr has the log, what the\n" +
	"task's scripts print, and the verdict. The server runs until the client closes stdin (or Ctrl-C). The\n" +
	"trace is written to FILE.partial and renamed to FILE as soon as the episode ends; an episode the client\n" +
	"left before it ended leaves FILE.partial, its end recording the code interrupted. An episode left\n" +
	"unfinished counts as not passed.\n\n" + isolationHelp

// mcpSessionID names the one session of `coworkenv mcp` in its resources' URIs, as the first
// session of `coworkenv serve` is named.
const mcpSessionID = "s1"

// mcpOptions are the options of `coworkenv mcp`.
type mcpOptions struct {
	streams
	task  string
	seed  int64
	trace string
	iso   *isolation
	// ctx ends the episode (nil: Ctrl-C or SIGTERM); transport carries the protocol (nil: stdin
	// and stdout).
	ctx       context.Context
	transport mcp.Transport
}

func (o *mcpOptions) flags(fs *flag.FlagSet) {
	fs.Int64Var(&o.seed, "seed", 0, "run seed, mixed with the task's seed (0 keeps the task's seed)")
	fs.StringVar(&o.trace, "trace", "", "write the episode as a JSON Lines trace to this file")
	o.iso = addIsolationFlags(fs, "session")
}

func (o *mcpOptions) args(pos []string) error {
	if len(pos) != 1 {
		return usagef("want one TASK, got %d arguments", len(pos))
	}
	o.task = pos[0]
	return nil
}

// nopCloser is a writer whose Close does nothing: the protocol's connection does not close
// stdout.
type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// mcpServe runs one episode, served over the transport, until the client leaves or ctx is
// done; stdout only has the help. It returns the exit status.
func mcpServe(ctx context.Context, args []string, transport mcp.Transport, stdout, stderr io.Writer) int {
	o := &mcpOptions{streams: streams{stdout, stderr}, ctx: ctx, transport: transport}
	err := parseOptions("mcp", mcpUsage, args, o.streams, o)
	if err == nil {
		err = runMCP(o)
	}
	return finish(stderr, "mcp", err)
}

func runMCP(o *mcpOptions) error {
	stderr := o.stderr
	ctx, transport := o.ctx, o.transport
	if ctx == nil {
		var stop func()
		ctx, stop = signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
	}
	if transport == nil {
		transport = &mcp.IOTransport{Reader: os.Stdin, Writer: nopCloser{o.stdout}}
	}
	if err := o.iso.check(); err != nil {
		return usage(err)
	}
	if o.trace != "" {
		if err := checkOutput("--trace", o.trace, outputFile, taskFiles([]string{o.task})...); err != nil {
			return usage(err)
		}
	}
	tg, err := locateTask(ctx, o.task)
	if err != nil {
		return usage(err)
	}
	isolated := o.iso.isolated(tg.builtin)
	if err := o.iso.checkUsed(isolated); err != nil {
		return usage(err)
	}
	print := dsl.BoundPrint(func(pos syntax.Position, msg string) { fmt.Fprintf(stderr, "  print %s: %s\n", pos, msg) })
	// The trace is put in place as soon as the episode ends, before the action that ended it is
	// answered; traceErr is read once the session is closed.
	var traceErr error
	var tf *rollout.TraceFile
	if o.trace != "" {
		tf = &rollout.TraceFile{Path: o.trace}
	}
	here, there := serve.TraceEnd(tf, func(err error) { traceErr = err })
	var sess serve.Live
	if isolated {
		pool, perr := o.iso.pool(1)
		if perr != nil {
			return usage(perr)
		}
		defer pool.Close()
		sess, err = mcpIsolated(ctx, pool, o, tg, tf, print, there)
	} else {
		sess, err = mcpHere(ctx, o, tg, tf, print, here)
	}
	if err != nil {
		return err
	}
	task := sess.Task()
	fmt.Fprintf(stderr, "coworkenv mcp: task %s (%s) · seed %d · %d turn(s): serving over stdio\n",
		task.Name, task.File, episode.EffectiveSeed(task.Seed, o.seed), len(task.Turns))
	runErr := serve.MCPServer(mcpSessionID, sess).Run(ctx, transport)
	st := sess.Close()
	if runErr != nil && ctx.Err() == nil {
		fmt.Fprintf(stderr, "coworkenv mcp: the connection ended: %v\n", runErr)
	}

	end := st.Result.End
	verdict := "not passed"
	switch {
	case end.Passed:
		verdict = "passed"
	case end.Error != nil && episode.Inconclusive(end.Error.Code):
		verdict = end.Error.Code
	}
	fmt.Fprintf(stderr, "coworkenv mcp: score %s (completion %s, safety %s, robustness %s) · %s\n",
		episode.FormatScore(end.Score), episode.FormatScore(end.Completion), episode.FormatScore(end.Safety),
		episode.FormatScore(end.Robustness), verdict)
	interrupted := end.Error != nil && end.Error.Code == episode.Interrupted
	if end.Error != nil && !interrupted {
		fmt.Fprintf(stderr, "coworkenv mcp: %s: %s\n", end.Error.Code, end.Error.Message)
	}
	if o.trace != "" {
		if traceErr != nil {
			if !interrupted {
				return failedf("--trace: %v", traceErr) // the episode ran; its trace is left undone
			}
			fmt.Fprintf(stderr, "coworkenv mcp: --trace: %v\n", traceErr)
		}
		if interrupted {
			fmt.Fprintf(stderr, "coworkenv mcp: the episode did not finish; the trace so far is in %s.partial\n", o.trace)
		}
	}
	if !end.Passed {
		return errNegative
	}
	return nil
}

// mcpHere creates the session of `coworkenv mcp` in this process; onEnd puts the trace tf in
// place (serve.TraceEnd).
func mcpHere(ctx context.Context, o *mcpOptions, tg *target, tf *rollout.TraceFile, print func(syntax.Position, string), onEnd func(*episode.Result, error)) (serve.Live, error) {
	task, src, err := tg.load(ctx)
	if err != nil {
		return nil, loadError(err)
	}
	sources, err := trace.Sources(tg.corpus, tg.rel)
	if err != nil {
		return nil, usage(err)
	}
	opts := session.Options{Source: src, Sources: sources, Print: print}
	if tf != nil {
		opts.Trace, opts.OnEnd = tf, onEnd
	}
	sess, err := session.Create(ctx, task, o.seed, opts)
	return sess, mcpCreateError(err)
}

// mcpIsolated creates the session of `coworkenv mcp` in a worker process.
func mcpIsolated(ctx context.Context, pool *isolate.Pool, o *mcpOptions, tg *target, tf *rollout.TraceFile, print func(syntax.Position, string), onEnd func(*session.Result, error)) (serve.Live, error) {
	ep, err := tg.episode()
	if err != nil {
		return nil, usage(err)
	}
	// The file is loaded first, in a worker: one that does not load is
	// a verdict, a task it does not declare a usage error, as in this process.
	support, err := isolate.Support(tg.corpus)
	if err != nil {
		return nil, usage(err)
	}
	l, err := isolate.LoadFile(ctx, pool, tg.corpus, support, tg.rel)
	if err != nil {
		return nil, usage(err)
	}
	if len(l.Diags) > 0 {
		return nil, failedf("%s", isolate.FormatDiags(l.Diags))
	}
	names := make([]string, len(l.Tasks))
	for i, ti := range l.Tasks {
		names[i] = ti.Name
	}
	if _, err := isolate.Pick(tg.corpus.DisplayPath(tg.rel), nil, names, tg.name); err != nil {
		return nil, usage(err)
	}
	host := isolate.SessionHost{Print: print}
	if tf != nil {
		host.Trace, host.OnEnd = tf, onEnd
	}
	sess, err := pool.Session(ctx, isolate.SessionSpec{Display: ep.Display, Files: ep.Files, File: ep.File, Task: ep.Task, Seed: o.seed}, host)
	var se *isolate.StartError
	if errors.As(err, &se) {
		return nil, failedf("%s", se.Msg) // the task file was tried: it does not load
	}
	return sess, mcpCreateError(err)
}

// mcpCreateError is the error of a session that could not be created.
func mcpCreateError(err error) error {
	var se *session.SetupError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &se):
		return failedf("%s", se.Diag) // the task's setup failed or was interrupted
	}
	return usage(err)
}
