package queue

// The blob store of a queue: content-addressed data that jobs and results refer to instead of
// carrying it, so that a job's body stays small whatever it needs (a task's files, a corpus's
// index) and data that many jobs share crosses the network once per worker process.
//
// A queue named N keeps its blobs on the stream BLOBS_N. A blob whose SHA-256 is H (hex) is split
// into chunks that fit in a message under the server's max_payload, on the subjects
// coworkenv.N.blobs.H.0, .1, ...; chunk 0, published last, carries the blob's size and number of
// chunks in headers, so a blob whose chunk 0 is stored is whole. The stream keeps one message per
// subject: storing a blob again, or two producers storing it at once, leaves one copy of the same
// bytes. Reading a chunk is one direct get (no consumer on the server).
//
// JetStream's own Object Store was the other candidate; it is not used because reading an object
// there subscribes an ordered consumer (a consumer created and removed on the server for every
// read, where a worker of a long generate run reads thousands of small blobs), and putting an
// object that exists uploads it again and then purges the old chunks, which a reader of the
// earlier copy may be reading.

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Blobs reads a queue's blobs: a job that Work hands a handler carries its queue's (Job.Blobs).
type Blobs interface {
	// Get returns the blob ref names. The bytes may be shared with other callers: do not
	// modify them.
	Get(ctx context.Context, ref string) ([]byte, error)
}

// ErrBlobNotFound is the error of Get for a ref whose blob is not on the server.
var ErrBlobNotFound = errors.New("no such blob on the server")

const (
	refPrefix = "sha256-"
	// MaxBlob is the largest blob Put stores and Get reads.
	MaxBlob = 1 << 30
	// maxChunk bounds a chunk of a blob; a chunk is also at most the server's max_payload less
	// chunkHeadroom (for the headers).
	maxChunk      = 256 << 10
	chunkHeadroom = 1 << 10
	// InlineResult is the largest body (or error) a result carries in its message; a larger one
	// goes to the blob store and the message carries its ref (in the header Coworkenv-Blob).
	// With a server whose max_payload is under twice this, the bound is half the max_payload.
	InlineResult = 256 << 10
	// DefaultBlobCache is how many bytes of blobs a Queue keeps in memory (WithBlobCache).
	DefaultBlobCache = 256 << 20
)

const (
	hdrBlob       = "Coworkenv-Blob" // on a result: the ref of its body (or error)
	hdrBlobSize   = "Coworkenv-Blob-Size"
	hdrBlobChunks = "Coworkenv-Blob-Chunks"
)

var validRef = regexp.MustCompile(`^sha256-[0-9a-f]{64}$`)

// Ref is the ref of data: "sha256-" and its SHA-256 in hex.
func Ref(data []byte) string {
	h := sha256.Sum256(data)
	return refPrefix + hex.EncodeToString(h[:])
}

// WithBlobCache sets how many bytes of blobs the Queue keeps in memory after Get reads them
// (DefaultBlobCache; 0 keeps none). A blob larger than a quarter of it is not kept.
func WithBlobCache(bytes int) Option {
	return func(o *options) { o.blobCache = max(bytes, 0) }
}

func blobsStream(name string) string  { return "BLOBS_" + name }
func blobsSubject(name string) string { return "coworkenv." + name + ".blobs" }

func (q *Queue) chunkSubject(sum string, k int) string {
	return q.blobSubj + "." + sum + "." + strconv.Itoa(k)
}

// chunkSize is the size of the chunks Put cuts a blob into.
func (q *Queue) chunkSize() int {
	return max(min(maxChunk, int(q.nc.MaxPayload())-chunkHeadroom), 512)
}

// inlineLimit is the largest result data that goes in the result's message.
func (q *Queue) inlineLimit() int {
	return min(InlineResult, int(q.nc.MaxPayload())/2)
}

// Put stores data in the queue's blob store and returns its ref (Ref). Data already stored is not
// sent again: Put looks it up first (and remembers what it stored or found).
func (q *Queue) Put(ctx context.Context, data []byte) (string, error) {
	if len(data) > MaxBlob {
		return "", fmt.Errorf("blob of %d bytes: the most is %d", len(data), MaxBlob)
	}
	ref := Ref(data)
	sum := ref[len(refPrefix):]
	q.blobMu.Lock()
	known := q.stored[ref]
	q.blobMu.Unlock()
	if known {
		return ref, nil
	}
	_, err := q.blobs.GetLastMsgForSubject(ctx, q.chunkSubject(sum, 0))
	switch {
	case err == nil:
	case errors.Is(err, jetstream.ErrMsgNotFound):
		if err := q.putChunks(ctx, sum, data); err != nil {
			return "", fmt.Errorf("store blob %s: %w", ref, err)
		}
	default:
		return "", fmt.Errorf("look up blob %s: %w", ref, err)
	}
	q.blobMu.Lock()
	q.stored[ref] = true
	q.blobMu.Unlock()
	return ref, nil
}

// putChunks publishes the chunks of data, chunk 0 (with the size and count) last.
func (q *Queue) putChunks(ctx context.Context, sum string, data []byte) error {
	size := q.chunkSize()
	n := max((len(data)+size-1)/size, 1)
	for k := n - 1; k >= 0; k-- {
		m := nats.NewMsg(q.chunkSubject(sum, k))
		m.Data = data[k*size : min((k+1)*size, len(data))]
		if k == 0 {
			m.Header.Set(hdrBlobSize, strconv.Itoa(len(data)))
			m.Header.Set(hdrBlobChunks, strconv.Itoa(n))
		}
		if _, err := q.js.PublishMsg(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

// Get returns the blob ref names, checking that its bytes have that SHA-256. A blob read once
// is kept in memory (up to WithBlobCache's bound, the least recently used going first), and Gets
// of the same ref at once read it once. The bytes are shared: do not modify them.
func (q *Queue) Get(ctx context.Context, ref string) ([]byte, error) {
	for {
		q.blobMu.Lock()
		if data, ok := q.cache.get(ref); ok {
			q.blobMu.Unlock()
			return data, nil
		}
		f, waiting := q.fetching[ref]
		if !waiting {
			f = &fetch{done: make(chan struct{})}
			q.fetching[ref] = f
		}
		q.blobMu.Unlock()
		if !waiting {
			f.data, f.err = q.readBlob(ctx, ref)
			q.blobMu.Lock()
			delete(q.fetching, ref)
			if f.err == nil {
				q.cache.add(ref, f.data)
			}
			q.blobMu.Unlock()
			close(f.done)
			return f.data, f.err
		}
		select {
		case <-f.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if f.err != nil && ctx.Err() == nil && (errors.Is(f.err, context.Canceled) || errors.Is(f.err, context.DeadlineExceeded)) {
			continue // the reader it waited for was stopped, not this caller: read it again
		}
		return f.data, f.err
	}
}

type fetch struct {
	done chan struct{}
	data []byte
	err  error
}

// readBlob reads the blob ref from the server, without the cache.
func (q *Queue) readBlob(ctx context.Context, ref string) ([]byte, error) {
	if !validRef.MatchString(ref) {
		return nil, fmt.Errorf("blob ref %q: not sha256- and 64 hex digits", ref)
	}
	sum := ref[len(refPrefix):]
	first, err := q.blobs.GetLastMsgForSubject(ctx, q.chunkSubject(sum, 0))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, fmt.Errorf("blob %s: %w", ref, ErrBlobNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read blob %s: %w", ref, err)
	}
	size, err1 := strconv.Atoi(first.Header.Get(hdrBlobSize))
	n, err2 := strconv.Atoi(first.Header.Get(hdrBlobChunks))
	if err1 != nil || err2 != nil || size < 0 || size > MaxBlob || n < 1 || n > size+1 {
		return nil, fmt.Errorf("blob %s: its size or chunk count is not readable", ref)
	}
	data := make([]byte, 0, size)
	data = append(data, first.Data...)
	for k := 1; k < n && len(data) <= size; k++ {
		m, err := q.blobs.GetLastMsgForSubject(ctx, q.chunkSubject(sum, k))
		if err != nil {
			return nil, fmt.Errorf("read blob %s, chunk %d of %d: %w", ref, k, n, err)
		}
		data = append(data, m.Data...)
	}
	if len(data) != size || Ref(data) != ref {
		return nil, fmt.Errorf("blob %s: the bytes stored do not have that SHA-256", ref)
	}
	return data, nil
}

// blobCache keeps blobs in memory up to max bytes, dropping the least recently used first.
type blobCache struct {
	max, size int
	order     *list.List // of *cached, most recently used first
	byRef     map[string]*list.Element
}

type cached struct {
	ref  string
	data []byte
}

func newBlobCache(max int) *blobCache {
	return &blobCache{max: max, order: list.New(), byRef: map[string]*list.Element{}}
}

func (c *blobCache) get(ref string) ([]byte, bool) {
	e, ok := c.byRef[ref]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*cached).data, true
}

func (c *blobCache) add(ref string, data []byte) {
	if _, ok := c.byRef[ref]; ok || len(data) > c.max/4 {
		return
	}
	c.byRef[ref] = c.order.PushFront(&cached{ref, data})
	c.size += len(data)
	for c.size > c.max {
		e := c.order.Back()
		old := c.order.Remove(e).(*cached)
		delete(c.byRef, old.ref)
		c.size -= len(old.data)
	}
}

// PutFiles stores each of files as a blob (Put) and returns their refs by path.
func (q *Queue) PutFiles(ctx context.Context, files map[string][]byte) (map[string]string, error) {
	refs := make(map[string]string, len(files))
	for p, data := range files {
		ref, err := q.Put(ctx, data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		refs[p] = ref
	}
	return refs, nil
}

// GetFiles reads back the files PutFiles stored, by path.
func GetFiles(ctx context.Context, b Blobs, refs map[string]string) (map[string][]byte, error) {
	if b == nil && len(refs) > 0 {
		return nil, errors.New("the job comes without its queue's blobs (run it with Work)")
	}
	files := make(map[string][]byte, len(refs))
	for p, ref := range refs {
		data, err := b.Get(ctx, ref)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		files[p] = data
	}
	return files, nil
}

// Decode checks that job is of the kind and decodes its body, JSON, into a T: the start of a
// handler.
func Decode[T any](job Job, kind string) (T, error) {
	var v T
	if job.Kind != kind {
		return v, fmt.Errorf("not a %s job: kind %q", kind, job.Kind)
	}
	if err := json.Unmarshal(job.Body, &v); err != nil {
		return v, fmt.Errorf("%s job: %v", kind, err)
	}
	return v, nil
}
