// Package corpus is the task corpus built into the binary: the capability taxonomy
// (capabilities.star), helper files (lib/) and the tasks (tasks/<area>/*.star).
package corpus

import (
	"embed"
	"io/fs"

	"github.com/coworkenv/coworkenv/dsl"
)

//go:embed capabilities.star lib tasks
var files embed.FS

func init() {
	data, err := files.ReadFile(dsl.CapabilitiesFile)
	if err != nil {
		panic(err) // embedded: cannot happen
	}
	dsl.RegisterBuiltinTaxonomy(data)
}

// Taxonomy is the built-in capability taxonomy, capabilities.star: also the taxonomy of task
// files that belong to no corpus (dsl.OpenStandalone).
func Taxonomy() []byte { return dsl.BuiltinTaxonomy() }

// FS is the embedded corpus; its root is the corpus root.
func FS() fs.FS { return files }

// Open returns the embedded corpus, shown in diagnostics as "corpus/...".
func Open() *dsl.Corpus { return dsl.NewCorpus(files, ".", "corpus") }
