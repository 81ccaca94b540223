package reqcache_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/coworkenv/coworkenv/internal/reqcache"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// server echoes each body back, numbered by how many requests it has had; a body that starts
// with "fail" gets a 500 the first time.
func server(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	var mu sync.Mutex
	failed := map[string]bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		k := n.Add(1)
		mu.Lock()
		first := !failed[string(body)]
		failed[string(body)] = true
		mu.Unlock()
		if strings.HasPrefix(string(body), "fail") && first {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, string(body)+" #"+string(rune('0'+k)))
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func post(t *testing.T, c *http.Client, url, body string) (int, string) {
	resp, err := c.Post(url, "text/plain", strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(data)
}

// Identical requests, side by side or one after another, are sent once and all get the first
// answer; another body or URL is another request.
func TestIdenticalRequestsSentOnce(t *testing.T) {
	t.Parallel()
	srv, n := server(t)
	cache := reqcache.New(nil)
	c := cache.Client(nil)
	var wg sync.WaitGroup
	got := make([]string, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, got[i] = post(t, c, srv.URL+"/v1", "same")
		}()
	}
	wg.Wait()
	for _, g := range got {
		assert.Equal(t, "same #1", g)
	}
	_, again := post(t, c, srv.URL+"/v1", "same")
	assert.Equal(t, "same #1", again)
	_, other := post(t, c, srv.URL+"/v1", "other")
	assert.Equal(t, "other #2", other)
	_, path := post(t, c, srv.URL+"/v2", "same")
	assert.Equal(t, "same #3", path)
	assert.EqualValues(t, 3, n.Load())
	assert.Equal(t, reqcache.Stats{Asked: 11, Sent: 3}, cache.Stats(), "answers without usage count no token")
}

// A failed answer is not kept: the next identical request is sent again.
func TestFailuresAreNotKept(t *testing.T) {
	t.Parallel()
	srv, n := server(t)
	cache := reqcache.New(nil)
	c := cache.Client(nil)
	code, _ := post(t, c, srv.URL, "fail once")
	assert.Equal(t, 500, code)
	code, body := post(t, c, srv.URL, "fail once")
	assert.Equal(t, 200, code)
	assert.Equal(t, "fail once #2", body)
	_, body = post(t, c, srv.URL, "fail once")
	assert.Equal(t, "fail once #2", body)
	assert.EqualValues(t, 2, n.Load())
}

// The tokens of the answers sent are added up, and those of the answers given again from the
// cache counted as saved.
func TestTokens(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		io.WriteString(w, `{"usage": {"prompt_tokens": `+string(rune('0'+len(body)))+`, "completion_tokens": 2, "total_tokens": 0}}`)
	}))
	t.Cleanup(srv.Close)
	cache := reqcache.New(nil)
	c := cache.Client(nil)
	post(t, c, srv.URL, "abc")
	post(t, c, srv.URL, "abc")
	post(t, c, srv.URL, "abcde")
	assert.Equal(t, reqcache.Stats{Asked: 3, Sent: 2, PromptTokens: 8, CompletionTokens: 4, SavedTokens: 5}, cache.Stats())
}
