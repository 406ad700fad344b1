package vector

import (
	"context"
	"errors"
	"math/rand/v2"
	"sort"
	"sync/atomic"
	"testing"
)

func TestEncodeDecode(t *testing.T) {
	v := []float32{1, -2.5, 0, 3.25}
	got, err := Decode(Encode(v))
	if err != nil || len(got) != 4 || got[1] != -2.5 || got[3] != 3.25 {
		t.Fatalf("%v %v", got, err)
	}
	if _, err := Decode([]byte{1, 2, 3}); err == nil {
		t.Fatal("odd BLOB accepted")
	}
}

func randVec(r *rand.Rand, d int) []float32 {
	v := make([]float32, d)
	for i := range v {
		v[i] = r.Float32()*2 - 1
	}
	return v
}

// Search is exact: the same top k as sorting every score, across
// collections, loaded once.
func TestSearchExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const d = 19 // not a multiple of 8: the tail loop runs
	data := map[string][]Entry{}
	for _, name := range []string{"a", "b", "c"} {
		for i := 0; i < 200; i++ {
			data[name] = append(data[name], Entry{Key: i, Vec: randVec(r, d)})
		}
	}
	data["other-model"] = []Entry{{Key: 0, Vec: randVec(r, 7)}}
	var loads atomic.Int32
	load := func(_ context.Context, name string) ([]Entry, error) {
		loads.Add(1)
		var out []Entry
		for _, e := range data[name] {
			out = append(out, Entry{Key: e.Key, Vec: append([]float32(nil), e.Vec...)})
		}
		return out, nil
	}
	ix := New()
	q := randVec(r, d)
	names := []string{"a", "b", "other-model", "c"}
	got, err := ix.Search(context.Background(), names, load, q, 5)
	if err != nil {
		t.Fatal(err)
	}
	var all []Hit
	qn := append([]float32(nil), q...)
	Normalize(qn)
	for _, name := range []string{"a", "b", "c"} {
		for _, e := range data[name] {
			v := append([]float32(nil), e.Vec...)
			Normalize(v)
			all = append(all, Hit{Collection: name, Key: e.Key, Score: Dot(qn, v)})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Score > all[j].Score })
	if len(got) != 5 {
		t.Fatalf("%d hits", len(got))
	}
	for i := range got {
		if got[i].Collection != all[i].Collection || got[i].Key != all[i].Key {
			t.Fatalf("hit %d = %+v, want %+v", i, got[i], all[i])
		}
	}
	ix.Search(context.Background(), names, load, q, 5)
	if n := loads.Load(); n != 4 {
		t.Errorf("%d loads, want 4 (each collection once)", n)
	}
	ix.Drop("a")
	ix.Search(context.Background(), names, load, q, 5)
	if n := loads.Load(); n != 5 {
		t.Errorf("%d loads after Drop, want 5", n)
	}
	// Fewer vectors than k: all of them.
	if got, _ := ix.Search(context.Background(), []string{"other-model"}, load, randVec(r, 7), 3); len(got) != 1 {
		t.Errorf("%v", got)
	}
}

// An empty load is not kept: the next search reads the collection again.
func TestSearchEmptyNotCached(t *testing.T) {
	ix := New()
	var entries []Entry
	load := func(context.Context, string) ([]Entry, error) { return entries, nil }
	if got, _ := ix.Search(context.Background(), []string{"x"}, load, []float32{1, 0}, 1); len(got) != 0 || ix.Size("x") != 0 {
		t.Fatalf("%v", got)
	}
	entries = []Entry{{Key: 4, Vec: []float32{0, 2}}}
	got, _ := ix.Search(context.Background(), []string{"x"}, load, []float32{1, 0}, 1)
	if len(got) != 1 || got[0].Key != 4 || ix.Size("x") != 1 {
		t.Fatalf("after vectors were written: %v", got)
	}
}

func TestSearchLoadError(t *testing.T) {
	ix := New()
	boom := errors.New("boom")
	fail := true
	load := func(context.Context, string) ([]Entry, error) {
		if fail {
			return nil, boom
		}
		return []Entry{{Key: 1, Vec: []float32{1, 0}}}, nil
	}
	if _, err := ix.Search(context.Background(), []string{"x"}, load, []float32{1, 0}, 1); !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
	fail = false
	got, err := ix.Search(context.Background(), []string{"x"}, load, []float32{1, 0}, 1)
	if err != nil || len(got) != 1 || got[0].Score < 0.999 {
		t.Fatalf("retry after a failed load: %v %v", got, err)
	}
}

// BenchmarkSearch100kx384 is the DEPENDENCIES.md sizing: one exact top-3
// search over 100,000 vectors of 384 dimensions already in RAM.
func BenchmarkSearch100kx384(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	const n, d = 100_000, 384
	entries := make([]Entry, n)
	for i := range entries {
		entries[i] = Entry{Key: i, Vec: randVec(r, d)}
	}
	ix := New()
	load := func(context.Context, string) ([]Entry, error) { return entries, nil }
	q := randVec(r, d)
	if _, err := ix.Search(context.Background(), []string{"c"}, load, q, 3); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		ix.Search(context.Background(), []string{"c"}, load, q, 3)
	}
}
