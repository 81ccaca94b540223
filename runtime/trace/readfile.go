package trace

import (
	"fmt"
	"io"
	"os"

	"github.com/coworkenv/coworkenv/internal/limits"
	"github.com/coworkenv/coworkenv/internal/shown"
)

// ErrTooLarge is the error of a trace over limits.TraceFile bytes, which ReadFile does not read.
var ErrTooLarge = fmt.Errorf("the trace is over the %d MiB limit of a trace that replay, export and report read", limits.TraceFile>>20)

// ReadFile reads the trace at path whole, as replay, export and report do, and refuses one over
// limits.TraceFile bytes (ErrTooLarge) before reading it. An error of the file system is its
// *fs.PathError's own error ("no such file or directory"); the caller names the file.
func ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, shown.Cause(err)
	}
	defer f.Close()
	if info, err := f.Stat(); err == nil && info.Mode().IsRegular() && info.Size() > limits.TraceFile {
		return nil, ErrTooLarge
	}
	data, err := io.ReadAll(io.LimitReader(f, limits.TraceFile+1))
	if err != nil {
		return nil, shown.Cause(err)
	}
	if len(data) > limits.TraceFile {
		return nil, ErrTooLarge
	}
	return data, nil
}
