package memsync_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/memsynctest"
)

// vectorGraph is the fake graph storing vectors (memsync.VectorGraph): its
// Apply takes each memory's vector and notes how many of them Apply had to
// compute (a vector kept by Memory.Embed is the same slice every time
// Vector returns it; one computed is a new slice each time).
type vectorGraph struct {
	*memsynctest.Graph
	emb        memsynctest.Embedder
	computed   atomic.Int64 // vectors computed during Apply
	vectors    atomic.Int64 // vectors Apply took
	mismatched atomic.Int64 // vectors not those of the memory's text
}

func (g *vectorGraph) Embedder() memsync.Embedder { return g.emb }

func (g *vectorGraph) Apply(ctx context.Context, batch []memsync.Memory) (memsync.ApplyResult, error) {
	for i := range batch {
		v, again := batch[i].Vector(g.emb), batch[i].Vector(g.emb)
		g.vectors.Add(1)
		if &v[0] != &again[0] {
			g.computed.Add(1)
		}
		if !slices.Equal(v, g.emb.Embed(batch[i].Text)) {
			g.mismatched.Add(1)
		}
	}
	return g.Graph.Apply(ctx, batch)
}

// TestEngineEmbedsBeforeApply: for a graph that stores vectors, the
// engine embeds the records it reads on its reader goroutine, so Apply
// gets every memory's vector (the one of its text) without computing one,
// on the rebuild path and on a daemon's pass alike.
func TestEngineEmbedsBeforeApply(t *testing.T) {
	for _, path := range []string{"sync pass", "rebuild"} {
		t.Run(path, func(t *testing.T) {
			g := &vectorGraph{Graph: memsynctest.NewGraph(), emb: memsynctest.NewEmbedder(32)}
			r := newRig(t, g)
			r.appendN("alice", 40)
			r.appendN("bob", 25)
			e, err := memsync.New(memsync.Options{Root: r.root, Graph: g, Logger: zaptest.NewLogger(t), BatchSize: 10})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if path == "rebuild" {
				_, err = e.Rebuild(ctx, nil)
			} else {
				_, err = e.SyncOnce(ctx)
			}
			if err != nil {
				t.Fatal(err)
			}
			if g.vectors.Load() != 65 || g.computed.Load() != 0 || g.mismatched.Load() != 0 {
				t.Errorf("Apply took %d vectors, computed %d itself, %d not its memory's; want 65, 0, 0",
					g.vectors.Load(), g.computed.Load(), g.mismatched.Load())
			}
		})
	}
}
