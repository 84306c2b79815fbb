package embedded

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/memsync/memsync/graph/graphtest"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/read"
)

// TestHybridConformance: the embedded store passes the hybrid cases
// (graphtest.RunHybrid): the same top 10 as Neo4j and offline, and no
// other agent's private vector returned or ranking anything.
func TestHybridConformance(t *testing.T) {
	g, err := Open(t.TempDir(), nil, WithEmbedder(graphtest.HybridEmbedder()))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	apply(t, g, graphtest.HybridCorpus(true)...)
	if os.Getenv("MEMSYNC_HYBRID_GOLDEN") != "" {
		// Prints graphtest.HybridTop10 .
		for _, q := range graphtest.HybridQueries {
			hits, err := read.Search(context.Background(), g, memsync.SearchQuery{Text: q, Groups: graphtest.HybridGroups, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			fmt.Print("{")
			for _, h := range hits {
				fmt.Printf("%q, ", h.UUID)
			}
			fmt.Println("},")
		}
		return
	}
	graphtest.RunHybrid(t, func(t *testing.T, q memsync.SearchQuery) []memsync.Hit {
		hits, err := read.Search(context.Background(), g, q)
		if err != nil {
			t.Fatal(err)
		}
		return hits
	})
}
