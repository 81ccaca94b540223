package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/coworkenv/coworkenv/isolate"
	"github.com/coworkenv/coworkenv/serve"
)

const serveUsage = "serve [--addr 127.0.0.1:8080] [--traces DIR] [--max-sessions N] [--idle-timeout D] [--token T] [--max-body BYTES] [--in-process|--isolate] [CORPUS...]\n\n" +
	"Serves live episodes over HTTP and JSON (docs/serve.md): a client creates a session of a task, then\n" +
	"calls tools and replies one step at a time, and gets each turn's reward and the verdict. CORPUS is a\n" +
	"corpus folder or a task file (default: the built-in corpus). " + serveIsolationHelp + " With --traces each session writes DIR/<id>.jsonl (DIR/<id>.jsonl.partial\n" +
	"while it runs, and for an episode closed before it finished). The token may come from\n" +
	"COWORKENV_SERVE_TOKEN instead of --token; an address that is not the loopback needs one. Ctrl-C\n" +
	"closes every session (their traces end) and stops. A server that fails (the address is taken...)\n" +
	"exits 1; stopping it with Ctrl-C is what was asked (0).\n\n" + isolationHelp

// serveIsolationHelp says where serve's and mcp's sessions run, beside isolationHelp.
const serveIsolationHelp = "Each session of a task file from disk runs in a worker process\n" +
	"(see below), from the loading of its file to its verdict: the worker waits for the client's\n" +
	"next action, and --time-limit bounds its own time over the whole session (setup, tool calls, changes\n" +
	"between turns, verifiers), not the client's. A session whose worker stops ends with that error (its\n" +
	"step is done, the result's error says why) and its trace with it; the other sessions go on. Each\n" +
	"session holds its worker while it lives, so up to --max-sessions workers run (with --memory-limit\n" +
	"each)."

// serveTokenEnv is the environment variable that may hold the token (a flag shows in ps).
const serveTokenEnv = "COWORKENV_SERVE_TOKEN"

// serveOptions are the options of `coworkenv serve`.
type serveOptions struct {
	streams
	corpora             []string
	addr, traces, token string
	maxSessions         int
	idle                time.Duration
	maxBody             int64
	iso                 *isolation
	// ctx ends the server (nil: Ctrl-C or SIGTERM); unhook, when set, is called then (a second
	// Ctrl-C kills at once); ready, when set, is told the address once the server listens.
	ctx    context.Context
	unhook func()
	ready  func(addr string)
}

func (o *serveOptions) flags(fs *flag.FlagSet) {
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "the address to listen on (port 0 picks a free one)")
	fs.StringVar(&o.traces, "traces", "", "write each session's trace to DIR/<id>.jsonl (created when missing)")
	fs.IntVar(&o.maxSessions, "max-sessions", serve.DefaultMaxSessions, "the most sessions kept at once, finished ones included until deleted or idle")
	fs.DurationVar(&o.idle, "idle-timeout", serve.DefaultIdleTimeout, "close a session after this long without an action (0 never)")
	fs.StringVar(&o.token, "token", "", "the bearer token every request but GET /health needs (or "+serveTokenEnv+")")
	fs.Int64Var(&o.maxBody, "max-body", serve.DefaultMaxBody, "the largest request body in bytes")
	o.iso = addIsolationFlags(fs, "session")
}

func (o *serveOptions) args(pos []string) error {
	o.corpora = pos
	return nil
}

// serveUntil is `coworkenv serve` until ctx is done (see serveOptions), with its exit status.
func serveUntil(ctx context.Context, args []string, stdout, stderr io.Writer, unhook func(), ready func(addr string)) int {
	o := &serveOptions{streams: streams{stdout, stderr}, ctx: ctx, unhook: unhook, ready: ready}
	err := parseOptions("serve", serveUsage, args, o.streams, o)
	if err == nil {
		err = runServe(o)
	}
	return finish(stderr, "serve", err)
}

func runServe(o *serveOptions) error {
	stdout, stderr := o.stdout, o.stderr
	ctx := o.ctx
	if ctx == nil {
		var stop func()
		ctx, stop = signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		o.unhook = stop
	}
	pos := o.corpora
	if o.token == "" {
		o.token = os.Getenv(serveTokenEnv)
	}
	switch {
	case o.maxSessions < 1:
		return usagef("--max-sessions %d: want at least 1", o.maxSessions)
	case o.idle < 0:
		return usagef("--idle-timeout %s: want 0 (never) or more", o.idle)
	case o.maxBody < 1:
		return usagef("--max-body %d: want at least 1", o.maxBody)
	}
	if err := o.iso.check(); err != nil {
		return usage(err)
	}
	if err := o.iso.checkUsed(o.iso.isolated(len(pos) == 0)); err != nil {
		return usage(err)
	}
	if err := checkAddr(o.addr, o.token != ""); err != nil {
		return usagef("--addr %s: %v", o.addr, err)
	}
	if o.traces != "" {
		if err := checkOutput("--traces", o.traces, outputFolder, pos...); err != nil {
			return usage(err)
		}
		if err := os.MkdirAll(o.traces, 0o755); err != nil {
			return usagef("--traces: %v", unwrap(err))
		}
	}
	// Each session in a worker holds it while it lives: as many workers as sessions.
	var pool *isolate.Pool
	if o.iso.isolated(len(pos) == 0) {
		var err error
		if pool, err = o.iso.pool(o.maxSessions); err != nil {
			return usage(err)
		}
		defer pool.Close()
	}
	var sources []serve.Source
	if len(pos) == 0 {
		s, err := embedded()
		if err != nil {
			return usage(err)
		}
		sources = append(sources, serve.Source{Corpus: s.corpus, Files: s.files, Pool: pool})
	}
	for _, p := range pos {
		s, err := openPath(p)
		if err != nil {
			return usage(err)
		}
		sources = append(sources, serve.Source{Corpus: s.corpus, Files: s.files, Pool: pool})
	}
	idleTimeout := o.idle
	if idleTimeout == 0 {
		idleTimeout = -1 // the flag's 0 is never; the option's 0 is the default
	}
	srv, err := serve.New(serve.Options{Sources: sources, TraceDir: o.traces, MaxSessions: o.maxSessions,
		IdleTimeout: idleTimeout, MaxBody: o.maxBody, Token: o.token})
	if err != nil {
		return usage(err)
	}
	defer srv.Close()
	if skipped := srv.Skipped(); len(skipped) > 0 {
		fmt.Fprintf(stderr, "%s\ncoworkenv serve: %d problem(s) above: those task files are not served\n", isolate.FormatDiags(skipped), len(skipped))
	}
	if len(srv.Tasks()) == 0 {
		return usagef("no task to serve")
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		// a port in use, an address not this machine's: serve could not run as asked
		var op *net.OpError
		if errors.As(err, &op) {
			err = op.Err // "bind: address already in use", without the address again
		}
		return usagef("--addr %s: %v", o.addr, err)
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, IdleTimeout: 2 * time.Minute}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	fmt.Fprintf(stdout, "coworkenv serve: listening on http://%s (%d tasks; Ctrl-C stops)\n", ln.Addr(), len(srv.Tasks()))
	if o.ready != nil {
		o.ready(ln.Addr().String())
	}
	select {
	case <-ctx.Done():
	case err := <-served:
		return err // the server fails
	}
	if o.unhook != nil {
		o.unhook()
	}
	fmt.Fprintln(stderr, "coworkenv serve: stopping: closing every session")
	// The sessions first: an action under way then gets its answer, and the requests end.
	srv.Close()
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close()
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err // the server fails
	}
	return nil // stopped, as asked
}

// checkAddr refuses an address that is not host:port, and one beyond the loopback without a
// token: the sessions run tasks in this process.
func checkAddr(addr string, token bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	if !token {
		return errors.New("not a loopback address: serving beyond this machine needs a token (--token or " + serveTokenEnv + ")")
	}
	return nil
}
