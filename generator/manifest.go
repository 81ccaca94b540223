package generator

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/coworkenv/coworkenv/dsl"
)

// ManifestFile is the name of the manifest in the output folder.
const ManifestFile = "manifest.jsonl"

// Record is one line of the manifest: one attempt at a task.
type Record struct {
	Attempt int    `json:"attempt"`
	Seed    int64  `json:"seed"`
	Status  string `json:"status"` // "accepted" or "rejected"
	// Task is the name the last candidate declared ("" when it declared none).
	Task string `json:"task"`
	// File is the accepted file, relative to the output folder ("" when rejected).
	File   string `json:"file"`
	Rounds int    `json:"rounds"`
	// Capabilities are what the attempt was asked for (its draw), the primary one first.
	Capabilities []string `json:"capabilities"`
	// Primary is the attempt's primary capability ("" with AllOf: none).
	Primary string `json:"primary,omitempty"`
	// MultiTurn says the last candidate has more than one turn or a simulated user.
	MultiTurn bool   `json:"multi_turn,omitempty"`
	Model     string `json:"model"`
	// Twin names the task a rejected duplicate repeats.
	Twin string `json:"twin"`
	// Diagnostics of the last round (empty for an accepted task).
	Diagnostics []dsl.Diagnostic `json:"diagnostics"`
	// History lists the diagnostic codes of every round, in order.
	History [][]string `json:"history"`
	Tokens  Tokens     `json:"tokens"`
	// RedTeam is what the red team did (nil when it was not asked: Options.RedTeam nil, or no
	// candidate passed the checks). Its tokens are not in Tokens.
	RedTeam *RedTeamRecord `json:"red_team,omitempty"`
}

// Tokens counts the tokens the model reported.
type Tokens struct {
	Prompt     int `json:"prompt"`
	Completion int `json:"completion"`
	Total      int `json:"total"`
}

func (t *Tokens) add(o Tokens) {
	t.Prompt += o.Prompt
	t.Completion += o.Completion
	t.Total += o.Total
}

// readManifest reads the records of an earlier run (none when there is no manifest). A last
// line cut short by a kill is dropped, and cut off the file, so that appending goes on cleanly.
func readManifest(dir string) ([]Record, error) {
	path := filepath.Join(dir, ManifestFile)
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out, err := ParseManifest(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if whole := bytes.LastIndexByte(data, '\n') + 1; whole < len(data) {
		if err := os.Truncate(path, int64(whole)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ParseManifest reads the records of a manifest's bytes (data is not changed, nor is any file).
// A last line without its newline (a run killed while writing it) is left out, as a run that
// resumes leaves it out; blank lines are skipped; attempts must follow each other from 0. An
// error names the line, counted from 1.
func ParseManifest(data []byte) ([]Record, error) {
	var out []Record
	for n := 1; len(data) > 0; n++ {
		end := bytes.IndexByte(data, '\n')
		if end < 0 {
			break // an unfinished last line
		}
		line := data[:end]
		data = data[end+1:]
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var r Record
		if err := json.Unmarshal(line, &r); err != nil {
			return nil, fmt.Errorf("line %d is not a manifest record: %v", n, err)
		}
		if r.Attempt != len(out) {
			return nil, fmt.Errorf("line %d is attempt %d, want %d (attempts are written in order)", n, r.Attempt, len(out))
		}
		out = append(out, r)
	}
	return out, nil
}

// manifestWriter appends records, each synced before the next attempt is committed.
type manifestWriter struct {
	f *os.File
}

func openManifest(dir string) (*manifestWriter, error) {
	f, err := os.OpenFile(filepath.Join(dir, ManifestFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	return &manifestWriter{f: f}, nil
}

func (m *manifestWriter) append(r *Record) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return err
	}
	if _, err := m.f.Write(buf.Bytes()); err != nil {
		return err
	}
	return m.f.Sync()
}

func (m *manifestWriter) Close() error { return m.f.Close() }

// headerPrefix starts the header of every accepted file.
const headerPrefix = "# coworkenv generate · attempt "

// header is the comment on top of an accepted file.
func header(r *Record) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s%d\n", headerPrefix, r.Attempt)
	fmt.Fprintf(&b, "# capabilities: %s\n", strings.Join(r.Capabilities, ", "))
	fmt.Fprintf(&b, "# model: %s\n", r.Model)
	fmt.Fprintf(&b, "# seed: %d\n", r.Seed)
	fmt.Fprintf(&b, "# rounds: %d\n\n", r.Rounds)
	return b.String()
}

var headerRE = regexp.MustCompile(`^` + regexp.QuoteMeta(headerPrefix) + `(\d+)\n`)

// headerAttempt reads the attempt number of a generated file's header.
func headerAttempt(path string) (int, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	m := headerRE.FindStringSubmatch(line)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	return n, err == nil
}

// stripHeader removes the generator's header from an accepted file.
func stripHeader(src string) string {
	if !strings.HasPrefix(src, headerPrefix) {
		return src
	}
	if i := strings.Index(src, "\n\n"); i >= 0 {
		return src[i+2:]
	}
	return src
}
