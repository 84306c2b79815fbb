package offline

import (
	"context"
	"math/rand"
	"slices"
	"testing"

	"github.com/memsync/memsync/graph/graphtest"
	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

// TestSignalsMatchTheGraphs: the offline path scores a shuffled signal
// corpus exactly as the oracle that both backends' conformance suite
// checks them against.
func TestSignalsMatchTheGraphs(t *testing.T) {
	corpus := graphtest.SignalCorpus(11, 300)
	want := graphtest.Scores(t, graphtest.NewOracle(corpus), corpus)
	shuffled := append([]memsync.Memory(nil), corpus...)
	rand.New(rand.NewSource(5)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	recs := make([]journal.Record, len(shuffled))
	for i, m := range shuffled {
		recs[i] = m.Record
	}
	layout := writeJournals(t, t.TempDir(), recs...)
	// A replayed line and a line by the wrong author change nothing.
	appendLine(t, layout.JournalDir("alice")+"/"+journal.FileName(recs[0].TS), string(recs[0].Canonical()))
	got := graphtest.Scores(t, Journals{Layout: layout}, corpus)
	if len(got) != len(want) {
		t.Fatalf("%d scores, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("score %d differs:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
}

// TestIncomingOffline: references read from the journals, with the
// target's supersession.
func TestIncomingOffline(t *testing.T) {
	layout := writeJournals(t, t.TempDir(),
		rec("m1", "alice", 1, "the claim", shared),
		rec("m3", "carol", 3, "replaces it", shared, supers("m1")),
		rec("m4", "carol", 4, "a later replacement", shared, supers("m1")),
	)
	nodes, err := Journals{Layout: layout}.Get(context.Background(), []string{"m1"})
	if err != nil {
		t.Fatal(err)
	}
	if n := nodes["m1"]; n.ReplacedBy != "m3" || !n.InvalidAt.Equal(clock.Add(3e9)) {
		t.Fatalf("m1 replaced by %q at %v, want m3 at +3s", n.ReplacedBy, n.InvalidAt)
	}
}

// TestCrossingSignalsChangeNothingOffline: the offline path (the plain
// reader and the memo a packet reads through) applies the privacy rule as
// the backends' conformance suite checks it: a's signals at b's private
// memory change nothing, and a's private record retires no shared memory.
func TestCrossingSignalsChangeNothingOffline(t *testing.T) {
	secret, crossing := graphtest.CrossingSignals()
	alone := writeJournals(t, t.TempDir(), secret.Record)
	recs := []journal.Record{}
	for _, m := range crossing {
		recs = append(recs, m.Record)
	}
	recs = append(recs, secret.Record)
	for _, m := range graphtest.PrivateRetirement() {
		recs = append(recs, m.Record)
	}
	crossed := writeJournals(t, t.TempDir(), recs...)
	readers := []struct {
		name string
		open func(memsync.Layout) memsync.SignalReader
	}{
		{"plain", func(l memsync.Layout) memsync.SignalReader { return Journals{Layout: l} }},
		{"memo", func(l memsync.Layout) memsync.SignalReader { return NewJournals(l) }},
	}
	for _, r := range readers {
		t.Run(r.name, func(t *testing.T) {
			want := graphtest.ScoreAt(t, r.open(alone), secret.UUID, groups("b"), graphtest.PrivacyClocks)
			got := graphtest.ScoreAt(t, r.open(crossed), secret.UUID, groups("b"), graphtest.PrivacyClocks)
			if !slices.Equal(got, want) {
				t.Fatalf("a's records changed b's private memory:\n got %q\nwant %q", got, want)
			}
			nodes, err := r.open(crossed).Get(context.Background(), []string{"c_shared", "a_own", "b_own"})
			if err != nil {
				t.Fatal(err)
			}
			for uuid, by := range map[string]string{"c_shared": "", "a_own": "a_shared_repl", "b_own": "b_own_repl"} {
				if n := nodes[uuid]; n.ReplacedBy != by {
					t.Errorf("%s replaced by %q, want %q", uuid, n.ReplacedBy, by)
				}
			}
		})
	}
	for _, reader := range []string{"a", "c"} {
		if got := uuids(find(t, crossed, memsync.SearchQuery{Text: "friday", Groups: groups(reader)})); !slices.Equal(got, []string{"c_shared"}) {
			t.Errorf("%s searches friday offline: %v, want c_shared", reader, got)
		}
	}
}
