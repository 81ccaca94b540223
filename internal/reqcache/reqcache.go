// Package reqcache answers identical requests to a model once: an http.RoundTripper, shared by
// every model client of a run (the generation model, the simulated users and judges that answer
// in validation, the red team), that keys each request by the SHA-256 of its method, URL and
// body, sends the first of each key on, and answers every later one with the same response. A
// request whose twin is on its way waits for it. Only successful answers (2xx) are kept: a
// failure is the sender's, and the next request of that key is sent again. The cache sits in
// front of a cassette's recorder (generator/cassette), so a request is recorded once.
//
// The answers kept are bounded (MaxBytes); past the bound, requests are sent on as if there were
// no cache.
package reqcache

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// MaxBytes bounds the bodies a cache keeps, in bytes.
const MaxBytes = 512 << 20

// Cache is a content-addressed cache of answers. Its zero value is not usable: use New.
type Cache struct {
	next http.RoundTripper

	mu      sync.Mutex
	entries map[[32]byte]*entry
	bytes   int
	stats   Stats
}

// Stats count a cache's requests.
type Stats struct {
	// Asked counts the requests made to the cache; Sent those it sent on (the others were
	// answered from it).
	Asked int `json:"asked"`
	Sent  int `json:"sent"`
	// PromptTokens and CompletionTokens add up the usage of the successful answers of the
	// requests sent (the "usage" of a chat completion); SavedTokens the total tokens of the
	// answers given from the cache, which were not paid for again.
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	SavedTokens      int `json:"saved_tokens"`
}

type entry struct {
	done chan struct{} // closed once the first request of the key is answered
	kept *answer       // nil when that answer was not kept
}

type answer struct {
	usage  usage
	status int
	proto  string
	header http.Header
	body   []byte
}

// New is a cache in front of next (nil: http.DefaultTransport).
func New(next http.RoundTripper) *Cache {
	if next == nil {
		next = http.DefaultTransport
	}
	return &Cache{next: next, entries: map[[32]byte]*entry{}}
}

// Stats are the counts so far.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}

// Client is an http.Client that sends through the cache, with the other fields of base (nil:
// the zero client).
func (c *Cache) Client(base *http.Client) *http.Client {
	out := &http.Client{}
	if base != nil {
		cp := *base
		out = &cp
	}
	out.Transport = c
	return out
}

// RoundTrip answers req from the cache, or sends it on.
func (c *Cache) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
	}
	h := sha256.New()
	io.WriteString(h, req.Method+" "+req.URL.String()+"\n")
	h.Write(body)
	var key [32]byte
	copy(key[:], h.Sum(nil))

	c.mu.Lock()
	c.stats.Asked++
	for {
		e, ok := c.entries[key]
		if !ok {
			break
		}
		c.mu.Unlock()
		select {
		case <-e.done:
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
		if e.kept != nil {
			c.mu.Lock()
			c.stats.SavedTokens += e.kept.usage.Prompt + e.kept.usage.Completion
			c.mu.Unlock()
			return e.kept.response(req), nil
		}
		c.mu.Lock() // the first failed: whoever is first now sends
	}
	e := &entry{done: make(chan struct{})}
	c.entries[key] = e
	c.stats.Sent++
	c.mu.Unlock()

	out := req.Clone(req.Context())
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.ContentLength = int64(len(body))
	resp, err := c.next.RoundTrip(out)
	var kept *answer
	if err == nil && resp.StatusCode/100 == 2 {
		data, rerr := io.ReadAll(resp.Body)
		resp.Body.Close()
		if rerr != nil {
			err, resp = rerr, nil
		} else {
			kept = &answer{status: resp.StatusCode, proto: resp.Proto, header: resp.Header.Clone(), body: data, usage: usageOf(data)}
			resp.Body = io.NopCloser(bytes.NewReader(data))
		}
	}
	c.mu.Lock()
	if kept != nil {
		c.stats.PromptTokens += kept.usage.Prompt
		c.stats.CompletionTokens += kept.usage.Completion
	}
	if kept != nil && c.bytes+len(kept.body) <= MaxBytes {
		c.bytes += len(kept.body)
		e.kept = kept
	} else {
		delete(c.entries, key)
	}
	c.mu.Unlock()
	close(e.done)
	return resp, err
}

func (a *answer) response(req *http.Request) *http.Response {
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", a.status, http.StatusText(a.status)),
		StatusCode:    a.status,
		Proto:         a.proto,
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        a.header.Clone(),
		Body:          io.NopCloser(bytes.NewReader(a.body)),
		ContentLength: int64(len(a.body)),
		Request:       req,
	}
}

// usage is the token usage a chat completion reports.
type usage struct {
	Prompt     int `json:"prompt_tokens"`
	Completion int `json:"completion_tokens"`
}

// usageOf reads the usage of an answer's body (zero when it has none).
func usageOf(body []byte) usage {
	var a struct {
		Usage usage `json:"usage"`
	}
	if json.Unmarshal(body, &a) != nil {
		return usage{}
	}
	return a.Usage
}
