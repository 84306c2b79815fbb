package neo4j_test

import (
	"context"
	neo4jdrv "github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"regexp"
	"strconv"
	"testing"

	"github.com/memsync/memsync/graph/graphtest"
	"github.com/memsync/memsync/graph/neo4j/neo4jtest"
)

// clearedPlans empties the server's query caches and returns how many
// plans they held.
func clearedPlans(t *testing.T, q func(string, ...map[string]any) []*neo4jdrv.Record) int {
	t.Helper()
	msg, _ := q("CALL db.clearQueryCaches()")[0].Values[0].(string)
	if msg == "Query cache already empty." {
		return 0
	}
	m := regexp.MustCompile(`cleared of (\d+) quer`).FindStringSubmatch(msg)
	if m == nil {
		t.Fatalf("db.clearQueryCaches() answered %q", msg)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// Small transactions with every mix of entities, links, supersessions,
// conflicts and placeholders, and batches of every size bucket, compile
// one plan per write statement: the server caches a plan per shape of its
// parameters (list sizes in buckets, element types), and the write path
// passes one map parameter so that no record mix makes a new shape. With a
// parameter per list, this run compiled 40 plans of the write path, each
// paid by the transaction that met it (one-record transactions then cost
// the server about twice their CPU on a fresh server).
func TestApplyPlansOnePerStatement(t *testing.T) {
	g := neo4jtest.Open(t)
	q := cypher(t)
	ctx := context.Background()
	corpus := graphtest.Corpus(7, 700)
	clearedPlans(t, q)
	i := 0
	for _, n := range []int{1, 1, 1, 2, 3, 1, 1, 5, 12, 1, 150, 1, 1, 7, 40, 1} {
		if _, err := g.Apply(ctx, corpus[i:i+n]); err != nil {
			t.Fatal(err)
		}
		i += n
	}
	for ; i < len(corpus); i++ {
		if _, err := g.Apply(ctx, corpus[i:i+1]); err != nil {
			t.Fatal(err)
		}
	}
	// The marker read, lookupMemories, createMemories, superseders and
	// setRetired, and the clearing statement itself; a little room for a
	// statement of another client of the shared server.
	n := clearedPlans(t, q)
	t.Logf("plans compiled: %d", n)
	if n > 8 {
		t.Errorf("Apply compiled %d plans; want one per statement (about 6)", n)
	}
}
