package embedded

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memsync/memsync/journal"
)

// incomingDump is Incoming(uuids) as sorted "source type target" lines.
func incomingDump(t *testing.T, g *Graph, uuids []string) string {
	t.Helper()
	refs, err := g.Incoming(context.Background(), uuids)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range refs {
		out = append(out, r.Source.UUID+" "+r.Relation+" "+r.Target)
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

func links(ids ...string) func(*journal.Record) {
	return func(r *journal.Record) { r.Links = ids }
}

func conflicts(ids ...string) func(*journal.Record) {
	return func(r *journal.Record) { r.ConflictsWith = ids }
}

func private(r *journal.Record) { r.Scope = journal.ScopePrivate }

// TestSignalsFollowWrites: the signals Incoming reads (the search file's
// signals table, written by the indexer) follow every write: a new memory's
// are read as soon as Apply returns, a replacement's take the place of the
// version it displaced (in a later batch and within one batch), a Drop
// empties them, a search file built again from the stored records holds
// the same, and a read-only reader reads them once they are indexed.
func TestSignalsFollowWrites(t *testing.T) {
	dir := t.TempDir()
	g, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { g.Close() }()
	targets := []string{"t1", "t2", "t3"}
	apply(t, g, mem("t1", 1, "one"), mem("t2", 2, "two"), mem("s", 3, "names t1", links("t1", "t1")))
	if got, want := incomingDump(t, g, targets), "s LINKS_TO t1"; got != want {
		t.Fatalf("after the first batch:\n%s\nwant\n%s", got, want)
	}
	// A private version of s wins its uuid (journal.ClashWins): its
	// signals replace the shared one's.
	res := apply(t, g, mem("s", 3, "names t2, against t1", links("t2"), conflicts("t1"), private))
	if len(res.Displaced) != 1 {
		t.Fatalf("replacement: %+v", res)
	}
	want := "s CONFLICTS_WITH t1\ns LINKS_TO t2"
	if got := incomingDump(t, g, targets); got != want {
		t.Fatalf("after a replacement:\n%s\nwant\n%s", got, want)
	}
	// Within one batch, only the winning version's signals are written.
	apply(t, g, mem("u", 4, "names t3", links("t3")), mem("u", 4, "names t1", links("t1"), private))
	want += "\nu LINKS_TO t1"
	if got := incomingDump(t, g, targets); got != want {
		t.Fatalf("after a clash within a batch:\n%s\nwant\n%s", got, want)
	}

	ro, err := OpenReadOnly(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if got := incomingDump(t, ro, targets); got != want {
		t.Fatalf("read-only reader:\n%s\nwant\n%s", got, want)
	}

	// The search file deleted while closed is built again from the stored
	// records, signals included.
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{SearchFileName, SearchFileName + "-wal", SearchFileName + "-shm"} {
		if err := os.Remove(filepath.Join(dir, p)); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	if g, err = Open(dir, nil); err != nil {
		t.Fatal(err)
	}
	if got := incomingDump(t, g, targets); got != want {
		t.Fatalf("search file built again:\n%s\nwant\n%s", got, want)
	}

	if err := g.Drop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := incomingDump(t, g, targets); got != "" {
		t.Fatalf("after Drop:\n%s", got)
	}
	apply(t, g, mem("s", 3, "names t1", links("t1")))
	if got := incomingDump(t, g, targets); got != "s LINKS_TO t1" {
		t.Fatalf("projected again:\n%s", got)
	}
}

// TestSignalsNotInMainFile: the main file's edges hold SUPERSEDES edges
// only; the rest are in the search file.
func TestSignalsNotInMainFile(t *testing.T) {
	g := openTest(t)
	apply(t, g, mem("a", 1, "a"), mem("b", 2, "b", links("a"), conflicts("a"), supers("a"),
		func(r *journal.Record) {
			r.Extra = map[string]json.RawMessage{journal.FieldSupports: json.RawMessage(`["a"]`)}
		}))
	if err := g.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	var main, search int
	if err := g.rdb.QueryRow(`SELECT (SELECT count(*) FROM main.edges), (SELECT count(*) FROM search.signals)`).Scan(&main, &search); err != nil {
		t.Fatal(err)
	}
	if main != 1 || search != 3 {
		t.Fatalf("edges in the main file %d, signals in the search file %d; want 1 and 3", main, search)
	}
	if got := incomingDump(t, g, []string{"a"}); got != "b CONFLICTS_WITH a\nb LINKS_TO a\nb SUPPORTS a" {
		t.Fatalf("Incoming:\n%s", got)
	}
}
