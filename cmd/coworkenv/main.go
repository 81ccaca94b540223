// Command coworkenv builds, checks and runs executable environments for AI coworker agents.
package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"strings"
)

// command is one subcommand.
type command struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

func commands() []command {
	return []command{
		{"validate", "check tasks: solvable, not trivial, deterministic, verified", cmdValidate},
		{"run", "run one episode of a task with an agent", cmdRun},
		{"replay", "replay a trace (or a folder of traces) and report the first divergence", cmdReplay},
		{"list", "list tasks with capabilities and turn counts", cmdList},
		{"rollout", "run an agent over many tasks, K samples each, writing traces and a summary", cmdRollout},
		{"worker", "run the jobs of `rollout`, `validate` and `generate --queue URL`: worker --queue URL", cmdQueueWorker},
		{"queue", "show the jobs of a queue: queue status --queue URL", cmdQueue},
		{"export", "turn traces into training or evaluation data: export sft|rl|atif|inspect TRACES... --out PATH, or export tasks", cmdExport},
		{"generate", "write tasks with a model, validated and repaired in a loop", cmdGenerate},
		{"serve", "serve live episodes over HTTP and JSON: sessions a client drives step by step", cmdServe},
		{"mcp", "serve one episode over MCP on stdin and stdout, for a harness that starts a command", cmdMCP},
		{"report", "write a self-contained HTML report of a trace, a rollout, a validation or a generation run", cmdReport},
		{"doc", "print the DSL reference (or `doc diagnostics`)", cmdDoc},
	}
}

func main() {
	// Validation and rollouts are throughput jobs that allocate many short-lived values: trade
	// memory for less garbage collection (about 30% of the CPU at the default of 100), unless
	// the user set GOGC.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
}

// Main runs the command line and returns the exit status (exitStatusHelp).
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "coworkenv: unknown command %q (commands: %s)\n", args[0], strings.Join(commandNames(), ", "))
	return 2
}

func commandNames() []string {
	var out []string
	for _, c := range commands() {
		out = append(out, c.name)
	}
	sort.Strings(out)
	return out
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "coworkenv: executable environments for AI coworker agents")
	fmt.Fprintln(w, "\nUsage: coworkenv COMMAND [flags] [args]\n\nCommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun `coworkenv COMMAND --help` for a command's flags.")
	fmt.Fprintf(w, "\n%s\n", exitStatusHelp)
}
