package embedded

import (
	"context"
	"fmt"
	"testing"

	"github.com/memsync/memsync/graph/graphtest"
)

// BenchmarkIncoming: Incoming of 20 memories at a time in a store of
// 20,000 (the read a snapshot's or a search's scoring makes); with
// writes, one record is applied before every 50 reads, as a daemon
// regenerates snapshots after a shared record.
func BenchmarkIncoming(b *testing.B) {
	for _, every := range []int{0, 50} {
		b.Run(fmt.Sprintf("write-every-%d", every), func(b *testing.B) {
			g, err := Open(b.TempDir(), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer g.Close()
			corpus := graphtest.Corpus(7, 20_000)
			for i := 0; i < len(corpus); i += 1000 {
				apply(b, g, corpus[i:min(i+1000, len(corpus))]...)
			}
			ctx := context.Background()
			if err := g.Flush(ctx); err != nil {
				b.Fatal(err)
			}
			ids := make([]string, len(corpus))
			for i, m := range corpus {
				ids[i] = m.UUID
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if every > 0 && i%every == 0 {
					apply(b, g, mem(fmt.Sprintf("w%09d", i), 100_000+i, "a shared record", links(ids[i%len(ids)])))
				}
				k := (i * 20) % (len(ids) - 20)
				if _, err := g.Incoming(ctx, ids[k:k+20]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
