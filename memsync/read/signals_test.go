package read_test

import (
	"context"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/read"
	"github.com/memsync/memsync/memsync/score"
)

// signalStore is a SignalReader over fixed nodes, with no references, that
// counts its reads.
type signalStore struct {
	nodes         map[string]memsync.Node
	gets, incomes int
}

func (s *signalStore) Get(_ context.Context, uuids []string) (map[string]memsync.Node, error) {
	s.gets++
	out := map[string]memsync.Node{}
	for _, id := range uuids {
		if n, ok := s.nodes[id]; ok {
			out[id] = n
		}
	}
	return out, nil
}

func (s *signalStore) Incoming(context.Context, []string) ([]memsync.Reference, error) {
	s.incomes++
	return nil, nil
}

// TestScoreNodesFollowsOriginals: a promotion takes its original's fate
// whether or not the original is among the nodes asked for; an original
// read only to judge its promotion is not in the answer; and the signals
// of the nodes and their originals are read once.
func TestScoreNodesFollowsOriginals(t *testing.T) {
	at := time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)
	promo := func(orig string) memsync.Node {
		n := node(journal.PromotionUUID(orig), "", "promoted "+orig, 5)
		n.Record.Kind, n.Record.Links = journal.KindPromotion, []string{orig}
		return n
	}
	current := node("orig-current", "", "kept", 1)
	gone := node("orig-gone", "", "replaced", 2)
	gone.InvalidAt, gone.ReplacedBy = at.Add(-time.Hour), "newer"
	store := &signalStore{nodes: map[string]memsync.Node{current.UUID: current, gone.UUID: gone}}
	for _, tc := range []struct {
		name  string
		nodes []memsync.Node
		want  map[string]score.Status
		gets  int
	}{
		{"original not asked for", []memsync.Node{promo(gone.UUID)}, map[string]score.Status{journal.PromotionUUID(gone.UUID): score.Superseded}, 1},
		{"original asked for too", []memsync.Node{promo(gone.UUID), gone}, map[string]score.Status{journal.PromotionUUID(gone.UUID): score.Superseded, gone.UUID: score.Superseded}, 0},
		{"original stands", []memsync.Node{promo(current.UUID)}, map[string]score.Status{journal.PromotionUUID(current.UUID): score.Active}, 1},
		{"original missing", []memsync.Node{promo("orig-nowhere")}, map[string]score.Status{journal.PromotionUUID("orig-nowhere"): score.Active}, 1},
		{"no promotion", []memsync.Node{current}, map[string]score.Status{current.UUID: score.Active}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store.gets, store.incomes = 0, 0
			got, err := read.ScoreNodes(context.Background(), store, tc.nodes, []string{journal.SharedGroup}, memsync.Clock{At: at})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("scored %d memories, want %d: %v", len(got), len(tc.want), got)
			}
			for id, st := range tc.want {
				if got[id].Result.Status != st {
					t.Errorf("%s: status %s (%q), want %s", id, got[id].Result.Status, got[id].Result.StatusWhy, st)
				}
			}
			if store.gets != tc.gets || store.incomes != 1 {
				t.Errorf("%d gets and %d signal reads, want %d and 1", store.gets, store.incomes, tc.gets)
			}
		})
	}
}
