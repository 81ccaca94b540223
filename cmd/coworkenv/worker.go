package main

import (
	"os"

	"github.com/coworkenv/coworkenv/isolate"
)

// The hidden worker mode: `coworkenv __worker` is the isolated process that validate, run,
// rollout, replay and generate start to run untrusted task files (package isolate). It is
// dispatched before main, and before anything else a test binary of this package does, so that
// the binary (or the test binary, which the pool finds with os.Executable) can re-execute
// itself as a worker; it is not listed among the commands.
func init() {
	if len(os.Args) > 1 && os.Args[1] == isolate.WorkerCommand {
		os.Exit(isolate.WorkerMain(os.Args[2:]))
	}
}
