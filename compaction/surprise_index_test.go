package compaction

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync/surprise"
)

// TestSurpriseIndexAfterCompaction: compaction blanks archived lines in
// place (a day keeps its size and inode), yet the surprise gate answers the
// same with its host-local index as without it: after a compaction, with
// the gate run before every step of one, and after a compaction crashed at
// any step and then finished. The probe resembles only a record of a day
// the compaction archives, so a stale index would call it a repeat.
func TestSurpriseIndexAfterCompaction(t *testing.T) {
	probe := &journal.Record{Agent: "a", Kind: journal.KindObservation, Tier: "learning", Text: "Deploys are slow on Fridays"}
	// gate scores the probe through the index file, checks the score
	// against one without it, and returns it.
	gate := func(t *testing.T, root, when string) surprise.Result {
		t.Helper()
		jdir := filepath.Join(root, "agents", "a", "memory", "journal")
		x, err := surprise.Load(jdir, filepath.Join(root, ".memsync", "surprise", "a.idx"), surprise.DefaultRecent)
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		recent, err := surprise.Recent(jdir, surprise.DefaultRecent)
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		withIndex, without := x.Score(probe), surprise.Score(probe, recent)
		if !reflect.DeepEqual(withIndex, without) {
			t.Fatalf("%s: with the index %+v, without it %+v", when, withIndex, without)
		}
		return withIndex
	}
	before := gate(t, fixture(t), "before")
	after := func() surprise.Result {
		root := fixture(t)
		if _, err := Compact(context.Background(), opts(root)); err != nil {
			t.Fatal(err)
		}
		return gate(t, root, "after")
	}()
	if before.Score >= after.Score {
		t.Fatalf("the probe is not more surprising once its only likeness is archived: %.2f then %.2f", before.Score, after.Score)
	}

	t.Run("gated at every step", func(t *testing.T) {
		root := fixture(t)
		gate(t, root, "before") // the index file is written
		o := opts(root)
		o.Hook = func(step string) error {
			gate(t, root, "before step "+step)
			return nil
		}
		if _, err := Compact(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		for _, when := range []string{"after", "after, again"} {
			if got := gate(t, root, when); !reflect.DeepEqual(got, after) {
				t.Fatalf("%s: %+v, a clean run gives %+v", when, got, after)
			}
		}
	})
	for _, step := range crashSteps {
		t.Run("crash at "+step, func(t *testing.T) {
			root := fixture(t)
			gate(t, root, "before")
			o := opts(root)
			o.Hook = func(s string) error {
				if s == step {
					return errCrash
				}
				return nil
			}
			if _, err := Compact(context.Background(), o); !errors.Is(err, errCrash) {
				t.Fatalf("crash at %s: err %v", step, err)
			}
			gate(t, root, "after the crash")
			gate(t, root, "after the crash, again")
			o.Hook = nil
			if _, err := Compact(context.Background(), o); err != nil {
				t.Fatal(err)
			}
			for _, when := range []string{"after the rerun", "after the rerun, again"} {
				if got := gate(t, root, when); !reflect.DeepEqual(got, after) {
					t.Fatalf("%s: %+v, a clean run gives %+v", when, got, after)
				}
			}
		})
	}
}
