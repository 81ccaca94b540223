package rollout

import (
	"os"
	"path/filepath"
	"regexp"
)

// A rollout writes its manifest and, when it runs through a queue, its traces as temporary files
// renamed into place (internal/atomicfile: ".NAME.tmp" and digits, beside NAME). A rollout
// killed while it wrote one leaves it behind; the next rollout into the same folder removes
// those of its own names, and nothing else: staleManifest in OUT, staleTrace in OUT/<task>/.
var (
	staleManifest = regexp.MustCompile(`^\.` + regexp.QuoteMeta(ManifestFile) + `\.tmp[0-9]+$`)
	staleTrace    = regexp.MustCompile(`^\.[0-9]+\.jsonl\.tmp[0-9]+$`)
)

// removeStale removes the temporary files a rollout into out that was killed left: of the
// manifest, and of the traces of the tasks named. Only regular files are removed; a file that
// cannot be removed is left (it is harmless).
func removeStale(out string, tasks []Task) {
	clean := func(dir string, pattern *regexp.Regexp) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range entries {
			if e.Type().IsRegular() && pattern.MatchString(e.Name()) {
				_ = os.Remove(filepath.Join(dir, e.Name()))
			}
		}
	}
	clean(out, staleManifest)
	for _, t := range tasks {
		clean(filepath.Join(out, t.Task.Name), staleTrace)
	}
}
