package vector

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"sort"
	"sync"
)

// ErrDims is returned for vectors whose length differs from the query's.
var ErrDims = errors.New("vector: dimensions differ")

// Encode returns v as little-endian float32 bytes (the stored BLOB).
func Encode(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// Decode reads a BLOB written by Encode; a length that is not a multiple
// of 4 is an error.
func Decode(b []byte) ([]float32, error) {
	if len(b)%4 != 0 {
		return nil, errors.New("vector: BLOB length is not a multiple of 4")
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}

// Normalize scales v to unit length in place (a zero vector stays zero).
func Normalize(v []float32) {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
}

// Dot is the dot product of two vectors of the same length (8-way
// unrolled; the compiler keeps the partial sums in registers).
func Dot(a, b []float32) float32 {
	n := len(a)
	b = b[:n]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= n; i += 8 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
		s4 += a[i+4] * b[i+4]
		s5 += a[i+5] * b[i+5]
		s6 += a[i+6] * b[i+6]
		s7 += a[i+7] * b[i+7]
	}
	for ; i < n; i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3 + s4 + s5 + s6 + s7
}

// Entry is one vector of a collection with the caller's key for it (a
// chunk number, a row id).
type Entry struct {
	Key int
	Vec []float32
}

// Loader reads every vector of a collection.
type Loader func(ctx context.Context, name string) ([]Entry, error)

// Hit is one search result.
type Hit struct {
	Collection string
	Key        int
	Score      float32 // cosine similarity
}

// collection is one loaded collection: dims-wide rows in one slice.
type collection struct {
	ready chan struct{} // closed when loaded (or failed)
	err   error
	dims  int
	keys  []int
	data  []float32 // len(keys) × dims, normalised
}

// Index caches collections and searches them. The zero value is not
// usable; use New.
type Index struct {
	mu   sync.Mutex
	cols map[string]*collection
}

// New returns an empty index.
func New() *Index { return &Index{cols: map[string]*collection{}} }

// Drop forgets a collection; the next search loads it again.
func (ix *Index) Drop(name string) {
	ix.mu.Lock()
	delete(ix.cols, name)
	ix.mu.Unlock()
}

// Size is the number of vectors of a loaded collection (0 when it is not
// loaded or empty).
func (ix *Index) Size(name string) int {
	ix.mu.Lock()
	c, ok := ix.cols[name]
	ix.mu.Unlock()
	if !ok {
		return 0
	}
	select {
	case <-c.ready:
		return len(c.keys)
	default:
		return 0
	}
}

// get returns a loaded collection, loading it once.
func (ix *Index) get(ctx context.Context, name string, load Loader) (*collection, error) {
	ix.mu.Lock()
	c, ok := ix.cols[name]
	if !ok {
		c = &collection{ready: make(chan struct{})}
		ix.cols[name] = c
		ix.mu.Unlock()
		c.fill(ctx, name, load)
		close(c.ready)
		// A failed load is retried next time, and so is an empty one: it
		// costs little, and a collection read before its vectors were
		// written (or by a caller who saw none) must not stay empty.
		if c.err != nil || len(c.keys) == 0 {
			ix.mu.Lock()
			if ix.cols[name] == c {
				delete(ix.cols, name)
			}
			ix.mu.Unlock()
		}
		return c, c.err
	}
	ix.mu.Unlock()
	select {
	case <-c.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return c, c.err
}

func (c *collection) fill(ctx context.Context, name string, load Loader) {
	entries, err := load(ctx, name)
	if err != nil {
		c.err = err
		return
	}
	if len(entries) == 0 {
		return
	}
	c.dims = len(entries[0].Vec)
	c.keys = make([]int, 0, len(entries))
	c.data = make([]float32, 0, len(entries)*c.dims)
	for _, e := range entries {
		if len(e.Vec) != c.dims {
			c.err = ErrDims
			return
		}
		start := len(c.data)
		c.data = append(c.data, e.Vec...)
		Normalize(c.data[start:])
		c.keys = append(c.keys, e.Key)
	}
}

// Search returns the k vectors of the named collections nearest to q, best
// first. Collections are loaded with load on first use; a collection whose
// vectors have other dimensions than q is skipped (made by another model).
func (ix *Index) Search(ctx context.Context, names []string, load Loader, q []float32, k int) ([]Hit, error) {
	if k <= 0 || len(q) == 0 {
		return nil, nil
	}
	qn := append([]float32(nil), q...)
	Normalize(qn)
	top := newTopK(k)
	for _, name := range names {
		c, err := ix.get(ctx, name, load)
		if err != nil {
			return nil, err
		}
		if c.dims != len(qn) {
			continue
		}
		d := c.dims
		for i, key := range c.keys {
			top.push(Hit{Collection: name, Key: key, Score: Dot(qn, c.data[i*d:(i+1)*d])})
		}
	}
	return top.sorted(), nil
}

// topK keeps the k best hits in a min-heap on Score.
type topK struct {
	k int
	h []Hit
}

func newTopK(k int) *topK { return &topK{k: k, h: make([]Hit, 0, k)} }

func (t *topK) push(x Hit) {
	if len(t.h) < t.k {
		t.h = append(t.h, x)
		for i := len(t.h) - 1; i > 0; {
			p := (i - 1) / 2
			if t.h[p].Score <= t.h[i].Score {
				break
			}
			t.h[p], t.h[i] = t.h[i], t.h[p]
			i = p
		}
		return
	}
	if x.Score <= t.h[0].Score {
		return
	}
	t.h[0] = x
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(t.h) && t.h[l].Score < t.h[m].Score {
			m = l
		}
		if r < len(t.h) && t.h[r].Score < t.h[m].Score {
			m = r
		}
		if m == i {
			return
		}
		t.h[m], t.h[i] = t.h[i], t.h[m]
		i = m
	}
}

func (t *topK) sorted() []Hit {
	out := append([]Hit(nil), t.h...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	return out
}
