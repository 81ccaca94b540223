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

// commands are the subcommands, in the order `coworkenv --help` lists them. Each is an options
// struct (its flags and arguments) and a run(opts) error (flags.go); exitStatus maps the error to
// the exit status.
func commands() []command {
	return []command{
		newCommand("validate", "check tasks: solvable, not trivial, deterministic, verified", validateUsage, runValidate),
		newCommand("run", "run one episode of a task with an agent", runUsage, runRun),
		newCommand("replay", "replay a trace (or a folder of traces) and report the first divergence", replayUsage, runReplay),
		newCommand("list", "list tasks with capabilities and turn counts", listUsage, runList),
		newCommand("rollout", "run an agent over many tasks, K samples each, writing traces and a summary", rolloutUsage, runRollout),
		newCommand("worker", "run the jobs of `rollout`, `validate` and `generate --queue URL`: worker --queue URL", workerUsage, runWorker),
		{"queue", "show the jobs of a queue: queue status --queue URL", queueMain},
		{"export", "turn traces into training or evaluation data: export sft|rl|atif|inspect TRACES... --out PATH, or export tasks", exportMain},
		newCommand("generate", "write tasks with a model, validated and repaired in a loop", generateUsage, runGenerate),
		newCommand("serve", "serve live episodes over HTTP and JSON: sessions a client drives step by step", serveUsage, runServe),
		newCommand("mcp", "serve one episode over MCP on stdin and stdout, for a harness that starts a command", mcpUsage, runMCP),
		newCommand("report", "write a self-contained HTML report of a trace, a rollout, a validation or a generation run", reportUsage, runReport),
		newCommand("doc", "print the DSL reference (or `doc diagnostics`)", docUsage, runDoc),
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
	name, err := mainCommand(args, streams{stdout, stderr})
	return finish(stderr, name, err)
}

// mainCommand runs the command args name: its name ("" for none) and how it ended.
func mainCommand(args []string, io streams) (string, error) {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		printUsage(io.stdout)
		if len(args) == 0 {
			return "", errUsageSaid
		}
		return "", nil
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.name, c.main(args[1:], io)
		}
	}
	if near := nearest(args[0], commandNames()); near != "" {
		return "", usagef("unknown command %q (did you mean %s?)", args[0], near)
	}
	return "", usagef("unknown command %q (commands: %s)", args[0], strings.Join(commandNames(), ", "))
}

func commandNames() []string {
	var out []string
	for _, c := range commands() {
		out = append(out, c.name)
	}
	sort.Strings(out)
	return out
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "coworkenv: executable environments for AI coworker agents")
	fmt.Fprintln(w, "\nUsage: coworkenv COMMAND [flags] [args]\n\nCommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun `coworkenv COMMAND --help` for a command's flags.")
	fmt.Fprintf(w, "\n%s\n", exitStatusHelp)
}
