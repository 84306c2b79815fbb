package neo4j_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/memsync/memsync/graph/neo4j"
	"github.com/memsync/memsync/graph/neo4j/neo4jtest"
	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/read"
)

// TestOpenReadOnly: a read-only open reads what the writer applied, also
// after it opened; it creates no schema: with an index missing it is
// refused with ErrNotReadable and the index stays missing (Open makes it).
func TestOpenReadOnly(t *testing.T) {
	g := neo4jtest.Open(t)
	ctx := context.Background()
	if _, err := g.Apply(ctx, []memsync.Memory{rec("r-1", 1, "the kestrel deploy needs a canary")}); err != nil {
		t.Fatal(err)
	}
	r, err := neo4j.OpenReadOnly(ctx, neo4jtest.Config(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Identity() != g.Identity() {
		t.Errorf("Identity = %q, want %q", r.Identity(), g.Identity())
	}
	if _, err := g.Apply(ctx, []memsync.Memory{rec("r-2", 2, "a second kestrel note")}); err != nil {
		t.Fatal(err)
	}
	got, err := r.Get(ctx, []string{"r-1", "r-2"})
	if err != nil || len(got) != 2 {
		t.Errorf("Get = %v, %v; want r-1 and r-2", got, err)
	}
	hits, err := read.Search(ctx, r, memsync.SearchQuery{Text: "kestrel canary", Groups: []string{journal.SharedGroup}})
	if err != nil || len(hits) == 0 || hits[0].UUID != "r-1" {
		t.Errorf("Search = %v, %v; want r-1 first", hits, err)
	}

	exec := cypher(t)
	exec("DROP INDEX memsync_memory_tier")
	_, err = neo4j.OpenReadOnly(ctx, neo4jtest.Config(t), nil)
	if !errors.Is(err, neo4j.ErrNotReadable) {
		t.Errorf("OpenReadOnly with an index missing = %v, want ErrNotReadable", err)
	}
	if n := len(exec("SHOW INDEXES YIELD name WHERE name = 'memsync_memory_tier' RETURN name")); n != 0 {
		t.Error("a read-only open created an index")
	}
	g2, err := neo4j.Open(ctx, neo4jtest.Config(t), nil) // puts the index back
	if err != nil {
		t.Fatal(err)
	}
	g2.Close()
	r2, err := neo4j.OpenReadOnly(ctx, neo4jtest.Config(t), nil)
	if err != nil {
		t.Fatalf("OpenReadOnly after Open made the schema: %v", err)
	}
	r2.Close()
}

// TestOpenReadOnlyUnreachable: an unreachable server is unavailable, not
// "not readable" (the read commands then answer offline).
func TestOpenReadOnlyUnreachable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	g, err := neo4j.OpenReadOnly(ctx, neo4j.Config{URI: "bolt://127.0.0.1:1", ConnectTimeout: time.Second, MaxRetryTime: time.Second}, nil)
	if err == nil {
		g.Close()
		t.Fatal("OpenReadOnly of a closed port succeeded")
	}
	if !errors.Is(err, memsync.ErrUnavailable) || errors.Is(err, neo4j.ErrNotReadable) {
		t.Fatalf("error %v: want memsync.ErrUnavailable, not ErrNotReadable", err)
	}
}
