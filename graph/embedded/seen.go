package embedded

import (
	"context"
	"fmt"
	"hash/maphash"
)

// seenBits is the size of a seenFilter, in bits (2 MiB): at 1M uuids about
// 0.2 % of the uuids never stored still answer "maybe" (and are looked up
// in the store, as without the filter); past ~10M it answers "maybe" to
// nearly everything, which costs what the store cost before it.
const seenBits = 1 << 24

// seenHashes is how many bits each uuid sets.
const seenHashes = 4

// seenFilter is a Bloom filter of every uuid this process's writer stored
// since the memories table was last seen empty (a Drop, or the first write
// to a new store). A uuid it has never seen is not in the store, so Apply
// need not look it up: in a rebuild, which projects every record into an
// empty store, that is every record. It is only trusted while nothing else
// wrote the main file: w is the connection it was built on and dataVersion
// what PRAGMA data_version said then, which changes when another
// connection (another process) commits. It holds no state of its own on
// disk: a crash loses it and the next process looks every uuid up again.
type seenFilter struct {
	w           *writer
	dataVersion int64
	bits        []uint64
	seed        maphash.Seed
}

func newSeenFilter(w *writer, dataVersion int64) *seenFilter {
	return &seenFilter{w: w, dataVersion: dataVersion, bits: make([]uint64, seenBits/64), seed: maphash.MakeSeed()}
}

// positions returns the first bit of uuid and the step between its bits.
func (f *seenFilter) positions(uuid string) (h, step uint64) {
	h = maphash.String(f.seed, uuid)
	return h, h>>32 | 1
}

// add records that uuid is stored.
func (f *seenFilter) add(uuid string) {
	h, step := f.positions(uuid)
	for i := 0; i < seenHashes; i++ {
		b := h % seenBits
		f.bits[b/64] |= 1 << (b % 64)
		h += step
	}
}

// mayHold is false only for a uuid add was never called with.
func (f *seenFilter) mayHold(uuid string) bool {
	h, step := f.positions(uuid)
	for i := 0; i < seenHashes; i++ {
		b := h % seenBits
		if f.bits[b/64]&(1<<(b%64)) == 0 {
			return false
		}
		h += step
	}
	return true
}

const (
	sqlDataVersion = `PRAGMA data_version`
	sqlNoMemories  = `SELECT NOT EXISTS (SELECT 1 FROM memories)`
)

// seenLocked returns the filter Apply may trust in the transaction it has
// open on w, or nil: it drops a filter built on another connection or
// outlived by another connection's commit, and starts one when the store is
// empty and has not been looked at since Open or the last Drop. g.mu must
// be held, and w's write transaction open (so nobody else commits meanwhile).
func (g *Graph) seenLocked(ctx context.Context, w *writer) (*seenFilter, error) {
	if g.seen == nil && !g.seenCheck {
		return nil, nil
	}
	var dv int64
	s, err := w.stmt(ctx, sqlDataVersion)
	if err != nil {
		return nil, err
	}
	if err := s.QueryRowContext(ctx).Scan(&dv); err != nil {
		return nil, fmt.Errorf("data version: %w", err)
	}
	if f := g.seen; f != nil {
		if f.w == w && f.dataVersion == dv {
			return f, nil
		}
		g.seen = nil // written by someone else since: look uuids up until the next Drop
		return nil, nil
	}
	g.seenCheck = false
	var empty bool
	if err := w.conn.QueryRowContext(ctx, sqlNoMemories).Scan(&empty); err != nil {
		return nil, fmt.Errorf("look for memories: %w", err)
	}
	if empty {
		g.seen = newSeenFilter(w, dv)
	}
	return g.seen, nil
}
