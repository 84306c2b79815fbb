package memsync_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/memsynctest"
)

// TestPromotionOnce: a private memory flagged important is promoted once:
// a second check, another promoter (a second daemon) and a graph that
// already holds the promotion all write nothing more.
func TestPromotionOnce(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	orig := memsync.Memory{Record: journal.Record{UUID: "mem_orig", TS: t0, Agent: "alice", Kind: journal.KindFact,
		Scope: journal.ScopePrivate, Text: "the vault rotates keys on Fridays"}}
	plain := memsync.Memory{Record: journal.Record{UUID: "mem_plain", TS: t0, Agent: "alice", Kind: journal.KindFact,
		Scope: journal.ScopePrivate, Text: "nothing special"}}
	sharedOne := memsync.Memory{Record: journal.Record{UUID: "mem_shared", TS: t0, Agent: "alice", Kind: journal.KindFact,
		Scope: journal.ScopeShared, Text: "already shared"}}
	flag := func(uuid, target string) memsync.Memory {
		return memsync.Memory{Record: journal.Record{UUID: uuid, TS: t0.Add(48 * time.Hour), Agent: "alice", Kind: journal.KindFeedback,
			Scope: journal.ScopePrivate, Text: "flagged", Links: []string{target},
			Extra: map[string]json.RawMessage{journal.FieldFeedback: json.RawMessage(`"important"`)}}}
	}
	g := memsynctest.NewGraph()
	if _, err := g.Apply(context.Background(), []memsync.Memory{orig, plain, sharedOne, flag("mem_f1", "mem_orig"), flag("mem_f2", "mem_shared")}); err != nil {
		t.Fatal(err)
	}
	layout := memsync.Layout{Root: t.TempDir()}
	now := func() time.Time { return t0.Add(72 * time.Hour) }
	ids := []string{"mem_orig", "mem_plain", "mem_shared", "mem_absent"}
	p := &memsync.Promoter{Graph: g, Layout: layout, Now: now, NoSync: true}
	wrote, err := p.Check(context.Background(), ids)
	if err != nil {
		t.Fatal(err)
	}
	want := memsync.PromotionUUID("mem_orig")
	if len(wrote) != 1 || wrote[0] != want {
		t.Fatalf("wrote %v, want [%s]", wrote, want)
	}
	path := filepath.Join(layout.JournalDir("alice"), journal.FileName(t0.Add(48*time.Hour)))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := journal.Parse([]byte(strings.TrimSpace(string(data))))
	if err != nil {
		t.Fatal(err)
	}
	if rec.UUID != want || rec.Kind != journal.KindPromotion || rec.Scope != journal.ScopeShared || rec.Agent != "alice" ||
		rec.Text != orig.Text || len(rec.Links) != 1 || rec.Links[0] != "mem_orig" || !rec.TS.Equal(t0.Add(48*time.Hour)) {
		t.Fatalf("promotion record: %+v", rec)
	}
	// Again, and from a second promoter: nothing more.
	for _, q := range []*memsync.Promoter{p, {Graph: g, Layout: layout, Now: func() time.Time { return t0.Add(900 * time.Hour) }, NoSync: true}} {
		if wrote, err := q.Check(context.Background(), ids); err != nil || len(wrote) != 0 {
			t.Fatalf("second check wrote %v (%v)", wrote, err)
		}
	}
	// Once projected, the graph's copy is enough (the journal line may
	// have moved to the archive).
	if _, err := g.Apply(context.Background(), []memsync.Memory{{Record: rec}}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if wrote, err := p.Check(context.Background(), ids); err != nil || len(wrote) != 0 {
		t.Fatalf("check after projection wrote %v (%v)", wrote, err)
	}
	if after, _ := os.ReadFile(path); len(after) != 0 {
		t.Fatalf("journal rewritten: %s", after)
	}
}
