package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/coworkenv/coworkenv/export"
)

// selector is a sink that chooses among its episodes (export sft's --per-task, --distinct,
// --per-capability and --mix).
type selector interface{ selection() *export.Selection }

// capabilityOf finds the capability an episode counts for in a selection: its task's first, the
// task found as replay finds it (once per task file and task); "" when it declares none or cannot
// be found (said once per task on w).
func (o *exportOptions) capabilityOf(w io.Writer, prefix string) func(e *export.Episode) string {
	known := map[string]string{}
	return func(e *export.Episode) string {
		key := e.File() + "\x00" + e.Start().FileSHA256 + "\x00" + e.Task()
		if c, ok := known[key]; ok {
			return c
		}
		c := ""
		task, err := loadTraced(o.corpusDir, e)
		switch {
		case err != nil:
			fmt.Fprintf(w, "%s: %s: its capability is unknown (counted as none): %s\n", prefix, e.Task(), firstLine(err.Error()))
		case len(task.Capabilities) > 0:
			c = task.Capabilities[0]
		}
		known[key] = c
		return c
	}
}

// splitCounts says how many written episodes each split has ("1 train, 2 dev"; "" when no trace
// records a split).
func splitCounts(n map[string]int) string {
	var parts []string
	for _, s := range []string{"train", "dev", "test"} {
		if n[s] > 0 {
			parts = append(parts, strconv.Itoa(n[s])+" "+s)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	if n[""] > 0 {
		parts = append(parts, strconv.Itoa(n[""])+" without a split")
	}
	return "by split: " + strings.Join(parts, ", ")
}
