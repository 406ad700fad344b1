// Package vector is the vector index: an exact in-RAM scan over the
// vectors of a collection, loaded lazily on first use from whatever the
// caller's Loader reads (the store's float32 BLOBs are the source of
// truth; this package only caches and searches them).
//
// Invariants:
//   - imports nothing internal (a leaf);
//   - vectors are normalised when loaded, so a search is a dot product and
//     its score is the cosine similarity, in [-1, 1], higher is nearer;
//   - a search is exact: it scores every vector of the named collections
//     and keeps the top k (8-way unrolled dot product, a k-sized heap);
//   - a collection is loaded at most once at a time (concurrent searches
//     wait for the same load), and Drop makes the next search reload it;
//     a failed or empty load is not kept.
package vector
