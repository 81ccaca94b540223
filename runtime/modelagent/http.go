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
//   - it patches the request body: the request fields of the configuration (requestFields:
//     temperature written as given, 0 included, as go-openai's float32 field has omitempty;
//     top_p, stop, and the extra body, whose keys win) are set on every request, and an
//     assistant message without content, or any message with neither content nor tool_calls,
//     gets "content": "" (go-openai drops it; OpenAI and some templates then reject the
//     message);
//   - it sends the extra headers of the configuration on every request;
//   - it retries 408, 429, 5xx (501 excepted), timeouts and dropped connections with
//     exponential backoff and seeded jitter, honouring Retry-After (in seconds);
//   - it bounds each attempt by Config.Timeout;
//   - it normalises the response (normalizeResponse) and keeps what go-openai does not decode
//     (logprobs, token ids) for the request's caller (withExtras).
type transport struct {
	cfg *Config
	// fields are set on the top level of every request body (requestFields).
	fields *jsonv.Object

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
			if h := extrasOf(ctx); h != nil {
				h.set(resp.extras)
			}
			return resp.Response, nil
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

// answer is a response with its body in memory, and what normalizeResponse kept of it.
type answer struct {
	*http.Response
	extras *responseExtras
}

// once makes one attempt and reads the whole answer within the attempt's time limit.
func (t *transport) once(ctx context.Context, req *http.Request, body []byte) (*answer, error) {
	actx, cancel := ctx, context.CancelFunc(func() {})
	if t.cfg.Timeout > 0 {
		actx, cancel = context.WithTimeout(ctx, t.cfg.Timeout)
	}
	defer cancel()
	r := req.Clone(actx)
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	for _, name := range sortedKeys(t.cfg.Headers) {
		r.Header[name] = append([]string(nil), t.cfg.Headers[name]...)
	}
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
	var extras *responseExtras
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		data, extras = normalizeResponse(data)
	}
	resp.Body = io.NopCloser(bytes.NewReader(data))
	resp.ContentLength = int64(len(data))
	return &answer{resp, extras}, nil
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

// patchRequest sets the request fields and the content of messages without one (see
// transport).
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
	if msgs, ok := obj.Get("messages"); ok {
		list, _ := msgs.([]jsonv.Value)
		for _, m := range list {
			mo, ok := m.(*jsonv.Object)
			if !ok {
				continue
			}
			role, _ := mo.Get("role")
			calls, _ := mo.Get("tool_calls")
			if _, has := mo.Get("content"); !has && (calls == nil || role == "assistant") {
				mo.Set("content", "")
			}
			// DeepSeek's thinking mode refuses a past tool-call message without its
			// reasoning_content, even when the model gave none (go-openai leaves "" out)
			if _, has := mo.Get("reasoning_content"); !has && role == "assistant" && calls != nil &&
				t.cfg.ReasoningHistory == ReasoningKeep {
				mo.Set("reasoning_content", "")
			}
		}
	}
	if t.fields != nil {
		for _, m := range t.fields.Members {
			obj.Set(m.Key, m.Value)
		}
	}
	return jsonv.Encode(obj)
}

// Bounds on what the agent keeps of an answer besides the message.
const (
	maxLogprobsBytes = 16 << 20 // a choice's logprobs, as JSON
	maxTokenIDs      = 1 << 20  // one list of token ids
)

// responseExtras are the fields of an answer that go-openai does not decode: vLLM's
// prompt_token_ids at the top level, and each choice's.
type responseExtras struct {
	promptTokenIDs []jsonv.Value
	choices        []choiceExtras // by position in choices
}

// choiceExtras are what a choice holds besides its message: its logprobs object, and the token
// ids of the prompt (SGLang) and of the completion (token_ids, vLLM and SGLang).
type choiceExtras struct {
	logprobs                 *jsonv.Object
	promptIDs, completionIDs []jsonv.Value
}

// choice is the extras of the choice at position i, with the answer's prompt token ids when
// the choice has none.
func (e *responseExtras) choice(i int) choiceExtras {
	if e == nil {
		return choiceExtras{}
	}
	var c choiceExtras
	if i >= 0 && i < len(e.choices) {
		c = e.choices[i]
	}
	if c.promptIDs == nil {
		c.promptIDs = e.promptTokenIDs
	}
	return c
}

// extrasKey is the context key of an extrasHolder.
type extrasKey struct{}

// extrasHolder receives the extras of the answer to the request made with its context.
type extrasHolder struct {
	mu sync.Mutex
	e  *responseExtras
}

func (h *extrasHolder) set(e *responseExtras) {
	h.mu.Lock()
	h.e = e
	h.mu.Unlock()
}

func (h *extrasHolder) get() *responseExtras {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.e
}

// withExtras is ctx with a holder for the extras of the answer to a request made with it.
func withExtras(ctx context.Context) (context.Context, *extrasHolder) {
	h := &extrasHolder{}
	return context.WithValue(ctx, extrasKey{}, h), h
}

func extrasOf(ctx context.Context) *extrasHolder {
	h, _ := ctx.Value(extrasKey{}).(*extrasHolder)
	return h
}

// normalizeResponse turns what some servers send into what go-openai reads: tool-call and
// function_call arguments sent as JSON values become the JSON strings of the protocol, and a
// message's reasoning (vLLM 0.17 and later, Ollama) is copied into reasoning_content when that
// is absent or empty. It returns the extras of the answer too. Anything it does not understand
// is left as it is.
func normalizeResponse(data []byte) ([]byte, *responseExtras) {
	v, err := jsonv.Decode(data)
	if err != nil {
		return data, nil
	}
	obj, ok := v.(*jsonv.Object)
	if !ok {
		return data, nil
	}
	extras := &responseExtras{promptTokenIDs: tokenIDs(obj, "prompt_token_ids")}
	changed := false
	stringArgs := func(fo *jsonv.Object) {
		args, ok := fo.Get("arguments")
		if !ok {
			return
		}
		switch args.(type) {
		case string, nil:
			return
		}
		enc, err := jsonv.Encode(args)
		if err != nil {
			return
		}
		fo.Set("arguments", string(enc))
		changed = true
	}
	choices, _ := obj.Get("choices")
	list, _ := choices.([]jsonv.Value)
	for _, c := range list {
		co, _ := c.(*jsonv.Object)
		extras.choices = append(extras.choices, choiceExtrasOf(co))
		msg, _ := co.Get("message")
		mo, _ := msg.(*jsonv.Object)
		calls, _ := mo.Get("tool_calls")
		cl, _ := calls.([]jsonv.Value)
		for _, call := range cl {
			callo, _ := call.(*jsonv.Object)
			fn, _ := callo.Get("function")
			fo, _ := fn.(*jsonv.Object)
			stringArgs(fo)
		}
		fn, _ := mo.Get("function_call")
		fo, _ := fn.(*jsonv.Object)
		stringArgs(fo)
		if r, _ := mo.Get("reasoning"); r != nil {
			if rs, ok := r.(string); ok && rs != "" {
				if rc, _ := mo.Get("reasoning_content"); rc == nil || rc == "" {
					mo.Set("reasoning_content", rs)
					changed = true
				}
			}
		}
	}
	if !changed {
		return data, extras
	}
	out, err := jsonv.Encode(obj)
	if err != nil {
		return data, extras
	}
	return out, extras
}

// choiceExtrasOf reads the extras of a choice; those over their bounds are left out.
func choiceExtrasOf(co *jsonv.Object) choiceExtras {
	var c choiceExtras
	if lp, _ := co.Get("logprobs"); lp != nil {
		if o, ok := lp.(*jsonv.Object); ok {
			if enc, err := jsonv.Encode(o); err == nil && len(enc) <= maxLogprobsBytes {
				c.logprobs = o
			}
		}
	}
	c.promptIDs = tokenIDs(co, "prompt_token_ids")
	c.completionIDs = tokenIDs(co, "token_ids")
	return c
}

// tokenIDs is the list of whole numbers o has under key, nil when it has none, when it is not
// such a list, or when it is longer than maxTokenIDs.
func tokenIDs(o *jsonv.Object, key string) []jsonv.Value {
	v, _ := o.Get(key)
	list, ok := v.([]jsonv.Value)
	if !ok || len(list) == 0 || len(list) > maxTokenIDs {
		return nil
	}
	for _, e := range list {
		if _, ok := e.(int64); !ok {
			return nil
		}
	}
	return list
}
