package modelagent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/coworkenv/coworkenv/internal/jsonv"
)

// maxResponseBytes bounds one response body.
const maxResponseBytes = 64 << 20

// transport is the HTTP client go-openai sends through (its HTTPDoer). It does what go-openai
// does not:
//   - it patches the request body: temperature is written as given, 0 included (go-openai's
//     float32 field has omitempty), and a message with neither content nor tool_calls (an
//     empty reply in the history) gets "content": "" (go-openai drops it; OpenAI then rejects
//     the message);
//   - it retries 408, 429, 5xx (501 excepted), timeouts and dropped connections with
//     exponential backoff and seeded jitter, honouring Retry-After (in seconds);
//   - it bounds each attempt by Config.Timeout;
//   - it normalises the response: tool-call arguments sent as a JSON object instead of a
//     string (some servers) become the string go-openai expects.
type transport struct {
	cfg *Config

	mu       sync.Mutex
	rng      *rand.Rand
	attempts int // attempts of the last request
}

// agents numbers the transports made without a JitterSeed, so that agents running side by side
// (a rollout) do not retry in lockstep.
var agents atomic.Uint64

func newTransport(cfg *Config) *transport {
	seed := cfg.JitterSeed
	if seed == 0 {
		seed = agents.Add(1)
	}
	return &transport{cfg: cfg, rng: rand.New(rand.NewPCG(seed, 0x636f776f726b))}
}

// lastAttempts is the number of HTTP attempts of the last request.
func (t *transport) lastAttempts() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.attempts
}

func (t *transport) setAttempts(n int) {
	t.mu.Lock()
	t.attempts = n
	t.mu.Unlock()
}

// Do sends req, retrying as described on transport. The response returned has its body in
// memory, so closing it is optional.
func (t *transport) Do(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
	}
	body, err := t.patchRequest(body)
	if err != nil {
		return nil, err
	}
	t.setAttempts(0)
	for retry := 0; ; retry++ {
		t.setAttempts(retry + 1)
		resp, err := t.once(ctx, req, body)
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr
		}
		var reason error
		var retryAfter time.Duration
		switch {
		case err != nil:
			if !retryable(err) || retry >= t.cfg.MaxRetries {
				return nil, err
			}
			reason = err
		case retryableStatus(resp.StatusCode) && retry < t.cfg.MaxRetries:
			reason = fmt.Errorf("HTTP %s", resp.Status)
			retryAfter = parseRetryAfter(resp.Header.Get("Retry-After"))
		default:
			return resp, nil
		}
		delay := t.delay(retry, retryAfter)
		if t.cfg.OnRetry != nil {
			t.cfg.OnRetry(retry+1, delay, reason)
		}
		if err := t.cfg.Sleep(ctx, delay); err != nil {
			return nil, err
		}
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr
		}
	}
}

// once makes one attempt and reads the whole answer within the attempt's time limit.
func (t *transport) once(ctx context.Context, req *http.Request, body []byte) (*http.Response, error) {
	actx, cancel := ctx, context.CancelFunc(func() {})
	if t.cfg.Timeout > 0 {
		actx, cancel = context.WithTimeout(ctx, t.cfg.Timeout)
	}
	defer cancel()
	r := req.Clone(actx)
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	resp, err := t.cfg.HTTPClient.Do(r)
	if err != nil {
		return nil, t.attemptErr(actx, err)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	resp.Body.Close()
	if err != nil {
		return nil, t.attemptErr(actx, fmt.Errorf("reading the response: %w", err))
	}
	if len(data) > maxResponseBytes {
		return nil, fmt.Errorf("the response is larger than %d bytes", maxResponseBytes)
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		data = normalizeResponse(data)
	}
	resp.Body = io.NopCloser(bytes.NewReader(data))
	resp.ContentLength = int64(len(data))
	return resp, nil
}

// timeoutError is an attempt that ran past Config.Timeout.
type timeoutError struct{ d time.Duration }

func (e *timeoutError) Error() string   { return fmt.Sprintf("no answer within %s", e.d) }
func (e *timeoutError) Timeout() bool   { return true }
func (e *timeoutError) Temporary() bool { return true }

func (t *transport) attemptErr(actx context.Context, err error) error {
	if errors.Is(actx.Err(), context.DeadlineExceeded) {
		return &timeoutError{t.cfg.Timeout}
	}
	return err
}

// retryable reports whether a transport error is worth another attempt: timeouts, refused or
// reset connections, answers cut short. A name that does not resolve, a malformed URL or a
// TLS failure are not.
func retryable(err error) bool {
	if errors.Is(err, context.Canceled) {
		return false
	}
	var te *timeoutError
	if errors.As(err, &te) {
		return true
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return dns.IsTimeout || dns.IsTemporary
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	return false
}

func retryableStatus(code int) bool {
	switch {
	case code == http.StatusRequestTimeout, code == http.StatusTooManyRequests:
		return true
	case code == http.StatusNotImplemented, code == http.StatusHTTPVersionNotSupported:
		return false
	}
	return code >= 500 && code <= 599
}

// parseRetryAfter reads a Retry-After header given in seconds (an HTTP date is ignored: the
// agent reads no wall clock).
func parseRetryAfter(s string) time.Duration {
	n, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || n <= 0 || n > 24*3600 {
		return 0
	}
	return time.Duration(n * float64(time.Second))
}

// delay is the wait before retry number retry+1: Backoff·2^retry capped at MaxBackoff, drawn
// uniformly between half and all of it, raised to retryAfter, and capped at MaxBackoff again.
func (t *transport) delay(retry int, retryAfter time.Duration) time.Duration {
	base, limit := t.cfg.Backoff, t.cfg.MaxBackoff
	d := limit
	if retry < 62 {
		if f := base << uint(retry); f > 0 && f>>uint(retry) == base && f < limit {
			d = f
		}
	}
	half := d / 2
	t.mu.Lock()
	j := time.Duration(t.rng.Int64N(int64(d-half) + 1))
	t.mu.Unlock()
	d = half + j
	if retryAfter > d {
		d = retryAfter
	}
	if d > limit {
		d = limit
	}
	return d
}

// patchRequest writes the temperature and the content of empty messages (see transport).
func (t *transport) patchRequest(body []byte) ([]byte, error) {
	if len(body) == 0 {
		return body, nil
	}
	v, err := jsonv.Decode(body)
	if err != nil {
		return nil, fmt.Errorf("modelagent: the request go-openai built is not JSON: %v", err)
	}
	obj, ok := v.(*jsonv.Object)
	if !ok {
		return body, nil
	}
	if t.cfg.Temperature != nil {
		obj.Set("temperature", *t.cfg.Temperature)
	}
	if msgs, ok := obj.Get("messages"); ok {
		list, _ := msgs.([]jsonv.Value)
		for _, m := range list {
			mo, ok := m.(*jsonv.Object)
			if !ok {
				continue
			}
			if _, has := mo.Get("content"); has {
				continue
			}
			if calls, _ := mo.Get("tool_calls"); calls != nil {
				continue
			}
			mo.Set("content", "")
		}
	}
	return jsonv.Encode(obj)
}

// normalizeResponse turns tool-call arguments sent as JSON values into the JSON strings of the
// protocol. Anything it does not understand is left as it is.
func normalizeResponse(data []byte) []byte {
	v, err := jsonv.Decode(data)
	if err != nil {
		return data
	}
	obj, ok := v.(*jsonv.Object)
	if !ok {
		return data
	}
	changed := false
	choices, _ := obj.Get("choices")
	list, _ := choices.([]jsonv.Value)
	for _, c := range list {
		co, _ := c.(*jsonv.Object)
		msg, _ := co.Get("message")
		mo, _ := msg.(*jsonv.Object)
		calls, _ := mo.Get("tool_calls")
		cl, _ := calls.([]jsonv.Value)
		for _, call := range cl {
			callo, _ := call.(*jsonv.Object)
			fn, _ := callo.Get("function")
			fo, _ := fn.(*jsonv.Object)
			args, ok := fo.Get("arguments")
			if !ok {
				continue
			}
			switch args.(type) {
			case string, nil:
				continue
			}
			enc, err := jsonv.Encode(args)
			if err != nil {
				continue
			}
			fo.Set("arguments", string(enc))
			changed = true
		}
	}
	if !changed {
		return data
	}
	out, err := jsonv.Encode(obj)
	if err != nil {
		return data
	}
	return out
}
