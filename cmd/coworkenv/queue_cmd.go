package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/queue"
)

const queueUsage = "queue status --queue URL [--name N] [--json]\n\n" +
	"Looks at the queues that the producers (`rollout`, `validate` and `generate` with --queue URL) and\n" +
	"`coworkenv worker --queue URL` share on a NATS JetStream server (docs/scaling.md). Subcommands:\n\n" +
	"  status   the jobs of every queue on the server, or of one (coworkenv queue status --help)"

const queueStatusUsage = "queue status --queue URL [--name N] [--json]\n\n" +
	"Prints the jobs of every coworkenv queue on the NATS JetStream server at URL (its streams JOBS_N;\n" +
	"one queue per kind of job: rollout, validate, generate), or of the queue N, one line each: queued\n" +
	"(published, not yet given to a worker), in flight (with a worker, or waiting for the ack wait to\n" +
	"go to another), done and failed (each job counted once, by the result of its latest attempt), then\n" +
	"the queue's ack wait and max deliver. It reads the server and changes nothing. --json prints one\n" +
	"object instead: {\"queues\": [{\"name\", \"queued\", \"in_flight\", \"done\", \"failed\", \"ack_wait\",\n" +
	"\"max_deliver\", \"duplicates\"}]} (durations as Go writes them, like \"30s\"), the queues by name.\n" +
	"A server that cannot be reached, or no queue named N, is a usage error (status 2)."

// queueMain is `coworkenv queue`: its subcommands.
func queueMain(args []string, io streams) error {
	if len(args) == 0 {
		fmt.Fprintf(io.stderr, "Usage: coworkenv %s\n", queueUsage)
		return errUsageSaid
	}
	switch args[0] {
	case "status":
		return in("queue status", newCommand("queue status", "", queueStatusUsage, runQueueStatus).main(args[1:], io))
	case "-h", "-help", "--help", "help":
		fmt.Fprintf(io.stdout, "Usage: coworkenv %s\n\n%s\n", queueUsage, exitStatusHelp)
		return nil
	}
	return usagef("unknown subcommand %q (subcommands: status)", args[0])
}

// queueStatusOptions are the options of `coworkenv queue status`.
type queueStatusOptions struct {
	streams
	url, name string
	json      bool
}

func (o *queueStatusOptions) flags(fs *flag.FlagSet) {
	fs.StringVar(&o.url, "queue", "", "URL of the NATS server, like nats://127.0.0.1:4222 (required)")
	fs.StringVar(&o.name, "name", "", "the queue to show (default: every queue on the server)")
	fs.BoolVar(&o.json, "json", false, "print one JSON object")
}

func (o *queueStatusOptions) args(pos []string) error { return noArgs(pos) }

// runQueueStatus is `coworkenv queue status`.
func runQueueStatus(o *queueStatusOptions) error {
	stdout := o.stdout
	switch {
	case o.url == "":
		return usagef("--queue URL of a NATS server is required")
	case o.url == "embedded":
		return usagef("--queue embedded lives in the process of its rollout; give the URL of a NATS server")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	infos, err := queue.Inspect(ctx, o.url, o.name)
	if err != nil {
		return usage(err)
	}
	if o.json {
		qs := make([]jsonv.Value, 0, len(infos))
		for _, in := range infos {
			qs = append(qs, jsonv.NewObject("name", in.Name, "queued", in.Queued, "in_flight", in.InFlight,
				"done", in.Done, "failed", in.Failed, "ack_wait", in.AckWait.String(),
				"max_deliver", in.MaxDeliver, "duplicates", in.Duplicates.String()))
		}
		fmt.Fprintln(stdout, jsonv.MustEncode(jsonv.NewObject("queues", qs)))
		return nil
	}
	if len(infos) == 0 {
		fmt.Fprintf(stdout, "no queue on %s\n", o.url)
		return nil
	}
	rows := [][]string{{"queue", "queued", "in flight", "done", "failed", "ack wait", "max deliver"}}
	for _, in := range infos {
		rows = append(rows, []string{in.Name, strconv.Itoa(in.Queued), strconv.Itoa(in.InFlight), strconv.Itoa(in.Done),
			strconv.Itoa(in.Failed), in.AckWait.String(), strconv.Itoa(in.MaxDeliver)})
	}
	writeTable(stdout, rows)
	return nil
}

// writeTable writes rows as aligned columns two spaces apart: the first to the left, the others
// to the right.
func writeTable(w io.Writer, rows [][]string) {
	var width []int
	for _, r := range rows {
		for i, c := range r {
			if i == len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			switch {
			case i == 0:
				b.WriteString(c + pad)
			default:
				b.WriteString("  " + pad + c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// queueFlags are the flags of a queue's settings, for the producers (`rollout`, `validate`,
// `generate` with --queue) and `coworkenv worker`. The settings live on the server (package
// queue): a flag given changes them for every producer and worker of the queue; one not given
// leaves them as they are (the defaults when the queue is new).
type queueFlags struct {
	fs          *flag.FlagSet
	ackWait     *time.Duration
	maxDeliver  *int
	retryFailed *bool // producers only
}

// queueFlagsHelp is the paragraph of a producer's or worker's --help about them.
const queueFlagsHelp = "--ack-wait D and --max-deliver N change the queue's settings on the server, for all its\n" +
	"producers and workers: how long a worker may go silent before its job goes to another worker (it\n" +
	"says it is still working every third of that), and how many times a job is delivered before it\n" +
	"ends failed (a job lost with its worker that many times too). Not given, the queue keeps what it\n" +
	"has (30s and 3 for a new queue)."

// addQueueFlags adds --ack-wait and --max-deliver, and --retry-failed for a producer.
func addQueueFlags(fs *flag.FlagSet, producer bool) *queueFlags {
	f := &queueFlags{fs: fs,
		ackWait:    fs.Duration("ack-wait", queue.DefaultAckWait, "set the queue's ack wait on the server (see --queue)"),
		maxDeliver: fs.Int("max-deliver", queue.DefaultMaxDeliver, "set the queue's max deliver on the server (see --queue)"),
	}
	if producer {
		f.retryFailed = fs.Bool("retry-failed", false, "run again the jobs whose result on the queue is failed (see --queue)")
	}
	return f
}

// options are the queue options of the flags given, once parsed, for the queue at queueURL; an
// error is a usage error (a value out of range, or a flag given without a queue).
func (f *queueFlags) options(queueURL string) ([]queue.Option, error) {
	var opts []queue.Option
	var errs []error
	f.fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "ack-wait":
			if *f.ackWait <= 0 {
				errs = append(errs, fmt.Errorf("--ack-wait: %s is not a positive duration", *f.ackWait))
			}
			opts = append(opts, queue.WithAckWait(*f.ackWait))
		case "max-deliver":
			if *f.maxDeliver < 1 {
				errs = append(errs, fmt.Errorf("--max-deliver: %d is not a positive number", *f.maxDeliver))
			}
			opts = append(opts, queue.WithMaxDeliver(*f.maxDeliver))
		case "retry-failed":
			if f.retryFailed != nil && *f.retryFailed {
				opts = append(opts, queue.WithRetryFailed())
			}
		default:
			return
		}
		if queueURL == "" {
			errs = append(errs, fmt.Errorf("--%s needs --queue", fl.Name))
		}
	})
	if len(errs) > 0 {
		return nil, errs[0]
	}
	return opts, nil
}
