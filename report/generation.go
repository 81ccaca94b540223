package report

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/coworkenv/coworkenv/generator"
	"github.com/coworkenv/coworkenv/internal/shown"
)

// WriteGeneration writes the report of a generation run: path is its output folder or its
// manifest (generator.ManifestFile).
func WriteGeneration(out, path string) error {
	if isDir(path) {
		path = filepath.Join(path, generator.ManifestFile)
	}
	recs, err := readManifest(path)
	if err != nil {
		return err
	}
	data, err := renderGeneration(path, recs)
	if err != nil {
		return err
	}
	return writeFile(out, data)
}

// readManifest reads a manifest's records (generator.ParseManifest: a last line without its
// newline, from a run killed while writing it, is left out). The file is only read.
func readManifest(path string) ([]generator.Record, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &InputError{Path: path, Err: shown.Cause(err)}
	}
	recs, err := generator.ParseManifest(data)
	switch {
	case err != nil:
		return nil, &InputError{Path: path, Err: err}
	case len(recs) == 0:
		return nil, inputErr(path, "no manifest records in it")
	}
	return recs, nil
}

type generationView struct {
	Manifest                     string
	Attempts, Accepted, Rejected int
	Yield                        string
	Models                       []string
	Tokens                       generator.Tokens
	TokensPerAccepted            int // 0 when none was accepted
	Coverage                     []generator.CoverageRow
	// RedTeam counts the red team's requests, tokens and runs (Requests 0: it was not asked).
	RedTeam generator.RedTeamSummary
	Rounds  []roundRow
	Reasons []keyCount
	Charts  []*barChart
}

// roundRow is one round of repair: how many attempts got that far, how many were accepted in it,
// the yield so far, and the diagnostic codes its candidates met.
type roundRow struct {
	Round, Reached, Accepted int
	Cumulative               string
	Codes                    string
}

type generationData struct {
	Attempts []attemptData `json:"attempts"`
}

type attemptData struct {
	Attempt int      `json:"a"`
	Status  string   `json:"st"`
	Task    string   `json:"task"`
	File    string   `json:"file"`
	Rounds  int      `json:"rounds"`
	Caps    []string `json:"caps"`
	Twin    string   `json:"twin,omitempty"`
	Codes   []string `json:"codes"`
	Diags   []string `json:"d,omitempty"`
	Tokens  [3]int   `json:"tok"`
}

func renderGeneration(path string, recs []generator.Record) ([]byte, error) {
	v := &generationView{Manifest: path, Attempts: len(recs)}
	data := generationData{Attempts: []attemptData{}}
	maxRounds := 0
	reasons := map[string]int{}
	models := map[string]bool{}
	for _, r := range recs {
		maxRounds = max(maxRounds, r.Rounds, len(r.History))
		v.Tokens.Prompt += r.Tokens.Prompt
		v.Tokens.Completion += r.Tokens.Completion
		v.Tokens.Total += r.Tokens.Total
		if rt := r.RedTeam; rt != nil {
			v.RedTeam.Requests += rt.Requests
			v.RedTeam.Tokens.Prompt += rt.Tokens.Prompt
			v.RedTeam.Tokens.Completion += rt.Tokens.Completion
			v.RedTeam.Tokens.Total += rt.Tokens.Total
			v.RedTeam.Hacks += rt.Hacks
			v.RedTeam.Careful += rt.Careful
			if rt.Runs != "" && r.Status == "accepted" {
				v.RedTeam.Kept++
			}
		}
		if r.Model != "" {
			models[r.Model] = true
		}
		ad := attemptData{Attempt: r.Attempt, Status: r.Status, Task: r.Task, File: r.File, Rounds: r.Rounds,
			Caps: r.Capabilities, Twin: r.Twin, Codes: []string{},
			Tokens: [3]int{r.Tokens.Prompt, r.Tokens.Completion, r.Tokens.Total}}
		if ad.Caps == nil {
			ad.Caps = []string{}
		}
		for _, d := range r.Diagnostics {
			if !slices.Contains(ad.Codes, d.Code) {
				ad.Codes = append(ad.Codes, d.Code)
			}
			ad.Diags = append(ad.Diags, cut(d.String()))
		}
		if r.Status == "accepted" {
			v.Accepted++
		} else {
			v.Rejected++
			switch {
			case r.Twin != "":
				reasons["duplicate"]++
			case len(ad.Codes) == 0:
				reasons["(no diagnostic)"]++
			default:
				for _, c := range ad.Codes {
					reasons[c]++
				}
			}
		}
		data.Attempts = append(data.Attempts, ad)
	}
	for m := range models {
		v.Models = append(v.Models, m)
	}
	slices.Sort(v.Models)
	v.Yield = fmtPct(float64(v.Accepted) / float64(v.Attempts))
	if v.Accepted > 0 {
		v.TokensPerAccepted = v.Tokens.Total / v.Accepted
	}
	v.Coverage = generator.Coverage(recs, nil)
	for k, n := range reasons {
		v.Reasons = append(v.Reasons, keyCount{k, n})
	}
	slices.SortFunc(v.Reasons, func(a, b keyCount) int { return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Key, b.Key)) })

	yield := &barChart{ID: "chart-yield", Title: "Accepted tasks by the round they passed in", Head: [2]string{"round", "accepted"},
		Desc: "Round 1 is the first candidate; each later round is a repair after the diagnostics."}
	cumulative := 0
	for round := 1; round <= maxRounds; round++ {
		row := roundRow{Round: round}
		codes := map[string]int{}
		for _, r := range recs {
			if len(r.History) >= round || r.Rounds >= round {
				row.Reached++
			}
			if r.Status == "accepted" && r.Rounds == round {
				row.Accepted++
			}
			if round <= len(r.History) {
				for _, c := range r.History[round-1] {
					codes[c]++
				}
			}
		}
		cumulative += row.Accepted
		row.Cumulative = fmtPct(float64(cumulative) / float64(len(recs)))
		row.Codes = countsText(codes)
		v.Rounds = append(v.Rounds, row)
		yield.Bars = append(yield.Bars, bar{Label: fmt.Sprintf("round %d", round), Value: float64(row.Accepted),
			Text: fmt.Sprintf("%d (%s so far)", row.Accepted, row.Cumulative), Class: "pass"})
	}
	why := &barChart{ID: "chart-reasons", Title: "Why attempts were rejected", Head: [2]string{"reason", "attempts"},
		Desc: "The diagnostic codes of each rejected attempt's last round (an attempt with several counts in each), and duplicates."}
	for _, r := range v.Reasons {
		why.Bars = append(why.Bars, bar{Label: r.Key, Value: float64(r.Count), Text: itoa(r.Count), Class: "fail"})
	}
	v.Charts = []*barChart{yield, why}
	p := page{Title: "Generation run", Kind: "generation", Body: v, Data: data,
		Nav: []navLink{{"summary", "Summary"}, {"rounds", "Rounds"}, {"reasons", "Rejections"}, {"coverage", "Coverage"}, {"attempts", "Attempts"}}}
	return render(p)
}

// countsText lists codes with their counts, most frequent first: "unsolved ×3, trivial ×1".
func countsText(m map[string]int) string {
	var kc []keyCount
	for k, n := range m {
		kc = append(kc, keyCount{k, n})
	}
	slices.SortFunc(kc, func(a, b keyCount) int { return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Key, b.Key)) })
	parts := make([]string, len(kc))
	for i, c := range kc {
		parts[i] = fmt.Sprintf("%s ×%d", c.Key, c.Count)
	}
	if len(parts) == 0 {
		return "–"
	}
	return strings.Join(parts, ", ")
}
