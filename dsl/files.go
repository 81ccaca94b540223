package dsl

import (
	"fmt"

	"go.starlark.net/syntax"
)

// SourceFile is a corpus file and its bytes.
type SourceFile struct {
	Rel  string // root-relative, slash-separated
	Data []byte
}

// SourceFiles returns the file rel and every file it loads, directly or through the files it
// loads, each once: rel first, then the others in the order the loader first reaches them (depth
// first, in the order of the load statements). These are the files whose bytes decide what the
// tasks of rel do (traces record their hashes).
//
// The load statements are read from each file's syntax tree and resolved by ResolveLoad, the
// loader's own rule; Starlark allows load only at the top level of a file, so none is missed.
// Files are read through ReadSource, with its checks. A file that cannot be read or parsed, and a
// load that ResolveLoad refuses, is an error: the loader refuses such a file too.
func (c *Corpus) SourceFiles(rel string) ([]SourceFile, error) {
	var out []SourceFile
	seen := map[string]bool{}
	var visit func(rel string) error
	visit = func(rel string) error {
		if seen[rel] {
			return nil
		}
		seen[rel] = true
		data, err := c.ReadSource(rel)
		if err != nil {
			return fmt.Errorf("%s: %w", c.DisplayPath(rel), err)
		}
		out = append(out, SourceFile{Rel: rel, Data: data})
		text, bad := sourceText(data)
		if bad != nil {
			return fmt.Errorf("%s:%w", c.DisplayPath(rel), bad)
		}
		f, err := FileOptions.Parse(c.DisplayPath(rel), text, 0)
		if err != nil {
			return err
		}
		for _, st := range f.Stmts {
			ld, ok := st.(*syntax.LoadStmt)
			if !ok {
				continue
			}
			module, _ := ld.Module.Value.(string)
			dep, err := ResolveLoad(rel, module)
			if err != nil {
				return fmt.Errorf("%s: %w", c.DisplayPath(rel), err)
			}
			if err := visit(dep); err != nil {
				return err
			}
		}
		return nil
	}
	if err := visit(rel); err != nil {
		return nil, err
	}
	return out, nil
}
