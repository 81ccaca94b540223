package isolate

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The ways a Go worker dies under RLIMIT_DATA are all memory-limit; a panic is a crash.
func TestClassify(t *testing.T) {
	t.Parallel()
	limited := &Pool{opts: Options{MemoryLimit: 256 << 20}}
	unlimited := &Pool{opts: Options{}}
	for _, c := range []struct {
		stderr string
		p      *Pool
		code   string
	}{
		{"fatal error: runtime: out of memory\n", limited, "memory-limit"},
		{"runtime/cgo: pthread_create failed: Resource temporarily unavailable\nSIGABRT: abort\n", limited, "memory-limit"},
		{"runtime: failed to create new OS thread (have 7 already; errno=11)\nfatal error: newosproc\n", limited, "memory-limit"},
		{"fatal error: unexpected signal during runtime execution\n[signal SIGSEGV: segmentation violation]\n", limited, "memory-limit"},
		{"fatal error: unexpected signal during runtime execution\n", unlimited, "crash"},
		{"panic: boom\n\ngoroutine 1 [running]:\n", limited, "crash"},
		{"SIGSEGV: segmentation violation\nPC=0x4a3f2c m=3 sigcode=1\n", limited, "memory-limit"},
		{"coworkenv worker: memory limit reached (300000000 bytes held, limit 268435456)\n", limited, "memory-limit"},
		{"panic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4a3f2c]\n", limited, "crash"},
	} {
		w := &worker{cmd: &exec.Cmd{}, stderr: &tail{max: 1 << 16}}
		_, _ = w.stderr.Write([]byte(c.stderr))
		code, msg := c.p.classify(w, false, "the file")
		assert.Equal(t, c.code, code, "%q: %s", c.stderr, msg)
	}
}
