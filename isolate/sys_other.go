//go:build !unix

package isolate

import (
	"errors"
	"os"
	"os/exec"
)

func limitMemory(bytes uint64) error {
	return errors.New("memory limits of worker processes need a Unix system")
}

func detach(cmd *exec.Cmd) {}

func killedBySignal(ps *os.ProcessState) bool { return false }

func peakRSS(ps *os.ProcessState) int64 { return 0 }
