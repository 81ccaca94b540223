//go:build unix

package isolate

import (
	"os"
	"os/exec"
	"runtime"
	"syscall"
)

// limitMemory caps this process's data segment (RLIMIT_DATA: the heap and every private
// writable mapping). RLIMIT_AS does not work for Go programs: the runtime reserves gigabytes of
// address space at start (about 5 GB on linux/amd64) that it never touches, whereas its
// reservations are not data until they are used.
func limitMemory(bytes uint64) error {
	return syscall.Setrlimit(syscall.RLIMIT_DATA, &syscall.Rlimit{Cur: bytes, Max: bytes})
}

// detach puts a worker in its own process group, so that a Ctrl-C at the terminal reaches the
// parent (which then stops its workers) and not the workers in the middle of a request.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killedBySignal reports whether the process ended by SIGKILL.
func killedBySignal(ps *os.ProcessState) bool {
	if ps == nil {
		return false
	}
	ws, ok := ps.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// peakRSS is the most resident memory the process ever had, in bytes (0 when unknown).
func peakRSS(ps *os.ProcessState) int64 {
	if ps == nil {
		return 0
	}
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss) // bytes there
	}
	return int64(ru.Maxrss) * 1024 // KiB on Linux and the BSDs
}
