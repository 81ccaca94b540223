// Package cassette records the HTTP exchanges of a generation run with a model and serves them
// again, so that a run can be reproduced offline, exactly.
//
// A cassette is a JSON Lines file. Its first line is a header
// {"format":"coworkenv-cassette/1","model":…}; every other line is one exchange:
// {"attempt","seq","request_sha256","request","status","response"}, where attempt is the
// generator's attempt the request belongs to (set on the request's context with WithAttempt),
// seq counts the HTTP requests of that attempt from 0 (retries included), request and response
// are the bodies (JSON when they are JSON, else strings). Lines are written as the exchanges
// happen, so attempts running side by side interleave; replay matches each request by its
// attempt and its number within the attempt, and requires the same body (by SHA-256): any
// difference is an error, so a replay never silently diverges from what was recorded. A body
// recorded with a successful answer is answered so wherever it comes: a run answers identical
// requests once (internal/reqcache), by whichever attempt sent it first, which timing decides. When an
// attempt was recorded twice (a killed run that was resumed), the later recording wins.
package cassette

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/validate/redteam"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
)

// Format is the header's format string.
const Format = "coworkenv-cassette/1"

// Header is the first line of a cassette.
type Header struct {
	Format string `json:"format"`
	Model  string `json:"model"`
	// RedTeam is the red team of the recorded run (nil: none), which a replay takes.
	RedTeam *redteam.Options `json:"red_team,omitempty"`
}

// Exchange is one recorded request and its answer.
type Exchange struct {
	Attempt       int             `json:"attempt"`
	Seq           int             `json:"seq"`
	RequestSHA256 string          `json:"request_sha256"`
	Request       json.RawMessage `json:"request"`
	Status        int             `json:"status"`
	Response      json.RawMessage `json:"response"`
}

type attemptKey struct{}

// WithAttempt marks the requests made with ctx as belonging to an attempt.
func WithAttempt(ctx context.Context, attempt int) context.Context {
	return context.WithValue(ctx, attemptKey{}, attempt)
}

func attemptOf(req *http.Request) (int, error) {
	a, ok := req.Context().Value(attemptKey{}).(int)
	if !ok {
		return 0, errors.New("cassette: the request carries no attempt (use cassette.WithAttempt)")
	}
	return a, nil
}

// counter numbers the requests of each attempt.
type counter struct {
	mu  sync.Mutex
	seq map[int]int
}

func (c *counter) next(attempt int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seq == nil {
		c.seq = map[int]int{}
	}
	n := c.seq[attempt]
	c.seq[attempt] = n + 1
	return n
}

func readBody(req *http.Request) ([]byte, error) {
	if req.Body == nil {
		return nil, nil
	}
	defer req.Body.Close()
	return io.ReadAll(req.Body)
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// asJSON keeps a JSON body as it is and turns anything else into a JSON string.
func asJSON(b []byte) json.RawMessage {
	if len(b) > 0 && json.Valid(b) {
		return json.RawMessage(b)
	}
	s, _ := json.Marshal(string(b))
	return s
}

// fromJSON is the body asJSON stored.
func fromJSON(m json.RawMessage) []byte {
	var s string
	if len(m) > 0 && m[0] == '"' && json.Unmarshal(m, &s) == nil {
		return []byte(s)
	}
	return m
}

// Recorder is an http.RoundTripper that sends requests on and writes every exchange to a
// cassette.
type Recorder struct {
	upstream http.RoundTripper
	counter
	mu sync.Mutex
	f  *os.File
	w  *bufio.Writer
}

// NewRecorder creates the cassette at path (or, with appendTo, continues it: a resumed run),
// sending requests through next (nil: http.DefaultTransport).
func NewRecorder(path string, appendTo bool, model string, next http.RoundTripper) (*Recorder, error) {
	return NewRecorderWith(path, appendTo, Header{Model: model}, next)
}

// NewRecorderWith is NewRecorder with the header's fields (Format is set here).
func NewRecorderWith(path string, appendTo bool, h Header, next http.RoundTripper) (*Recorder, error) {
	if next == nil {
		next = http.DefaultTransport
	}
	flags := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	if appendTo {
		flags = os.O_CREATE | os.O_WRONLY | os.O_APPEND
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		return nil, err
	}
	r := &Recorder{upstream: next, f: f, w: bufio.NewWriter(f)}
	if st, err := f.Stat(); err == nil && st.Size() == 0 {
		h.Format = Format
		if err := r.write(h); err != nil {
			f.Close()
			return nil, err
		}
	}
	return r, nil
}

func (r *Recorder) write(v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.w.Write(data)
	r.w.WriteByte('\n')
	return r.w.Flush()
}

// RoundTrip sends the request and records the exchange.
func (r *Recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	attempt, err := attemptOf(req)
	if err != nil {
		return nil, err
	}
	body, err := readBody(req)
	if err != nil {
		return nil, err
	}
	out := req.Clone(req.Context())
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.ContentLength = int64(len(body))
	resp, err := r.upstream.RoundTrip(out)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(data))
	ex := Exchange{Attempt: attempt, Seq: r.counter.next(attempt), RequestSHA256: sum(body), Request: asJSON(body),
		Status: resp.StatusCode, Response: asJSON(data)}
	if err := r.write(ex); err != nil {
		return nil, fmt.Errorf("cassette: recording: %v", err)
	}
	return resp, nil
}

// Close flushes and closes the cassette.
func (r *Recorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.w.Flush(); err != nil {
		r.f.Close()
		return err
	}
	return r.f.Close()
}

// Player is an http.RoundTripper that answers from a cassette and never touches the network.
type Player struct {
	path   string
	header Header
	ex     map[[2]int]*Exchange
	bySum  map[string]*Exchange // the last exchange of each request body
	counter
}

// Load reads a cassette.
func Load(path string) (*Player, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	p := &Player{path: path, ex: map[[2]int]*Exchange{}, bySum: map[string]*Exchange{}}
	lines := strings.Split(string(data), "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if i == 0 {
			if err := json.Unmarshal([]byte(l), &p.header); err != nil || p.header.Format != Format {
				return nil, fmt.Errorf("%s: not a cassette (the first line must be {\"format\":%q,...})", path, Format)
			}
			continue
		}
		var ex Exchange
		if err := json.Unmarshal([]byte(l), &ex); err != nil {
			if i == len(lines)-1 {
				break // the last line of a recording that was killed
			}
			return nil, fmt.Errorf("%s:%d: not an exchange: %v", path, i+1, err)
		}
		p.ex[[2]int{ex.Attempt, ex.Seq}] = &ex
		p.bySum[ex.RequestSHA256] = &ex
	}
	if p.header.Format == "" {
		return nil, fmt.Errorf("%s: empty cassette", path)
	}
	return p, nil
}

// Header is the cassette's header.
func (p *Player) Header() Header { return p.header }

// Model is the model the cassette was recorded with.
func (p *Player) Model() string { return p.header.Model }

// Len is the number of exchanges.
func (p *Player) Len() int { return len(p.ex) }

// RoundTrip answers from the cassette.
func (p *Player) RoundTrip(req *http.Request) (*http.Response, error) {
	attempt, err := attemptOf(req)
	if err != nil {
		return nil, err
	}
	body, err := readBody(req)
	if err != nil {
		return nil, err
	}
	seq := p.counter.next(attempt)
	got := sum(body)
	if ex, ok := p.bySum[got]; ok && (ex.Status/100 == 2 || p.ex[[2]int{attempt, seq}] == ex) {
		// the answer to this body, wherever it was recorded: identical requests of a run are
		// answered once (internal/reqcache), by whichever attempt asked first
		return p.answer(ex, req), nil
	}
	ex, ok := p.ex[[2]int{attempt, seq}]
	if !ok {
		return nil, fmt.Errorf("cassette %s: attempt %d makes request %d, which was not recorded (was the cassette recorded with other flags or a shorter run?)", p.path, attempt, seq+1)
	}
	if got != ex.RequestSHA256 {
		return nil, fmt.Errorf("cassette %s: attempt %d, request %d differs from the recording (sha256 %s, recorded %s): %s",
			p.path, attempt, seq+1, got[:12], ex.RequestSHA256[:min(12, len(ex.RequestSHA256))], firstDifference(fromJSON(ex.Request), body))
	}
	return p.answer(ex, req), nil
}

// answer is the recorded response of ex.
func (p *Player) answer(ex *Exchange, req *http.Request) *http.Response {
	data := fromJSON(ex.Response)
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", ex.Status, http.StatusText(ex.Status)),
		StatusCode:    ex.Status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{"Content-Type": []string{"application/json"}},
		Body:          io.NopCloser(bytes.NewReader(data)),
		ContentLength: int64(len(data)),
		Request:       req,
	}
}

// firstDifference shows where two JSON bodies part, both re-encoded the same way so that layout
// and escaping (encoding/json writes ">" as "\u003e", other encoders do not) do not count.
func firstDifference(recorded, now []byte) string {
	compact := func(b []byte) string {
		if v, err := jsonv.Decode(b); err == nil {
			if enc, err := jsonv.Encode(v); err == nil {
				return string(enc)
			}
		}
		var buf bytes.Buffer
		if json.Compact(&buf, b) == nil {
			return buf.String()
		}
		return string(b)
	}
	a, b := compact(recorded), compact(now)
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	if i == len(a) && i == len(b) {
		return "the bodies differ only in layout"
	}
	from := max(0, i-60)
	return fmt.Sprintf("first difference at byte %d: recorded …%s… now …%s…", i, snippet(a, from, i+60), snippet(b, from, i+60))
}

func snippet(s string, from, to int) string {
	if from > len(s) {
		return ""
	}
	return s[from:min(to, len(s))]
}
