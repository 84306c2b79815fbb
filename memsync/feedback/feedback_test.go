package feedback_test

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/feedback"
)

func TestJournal(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	node := func(agent string, scope journal.Scope) memsync.Node {
		return memsync.Node{Memory: memsync.Memory{Record: journal.Record{UUID: "mem_20261120T000000Z_" + agent + "_0001",
			Agent: agent, Kind: journal.KindFact, Scope: scope, Text: "x"}}}
	}
	for _, c := range []struct {
		name       string
		n          memsync.Node
		f          feedback.Flag
		err        error
		wantWriter string
		wantScope  journal.Scope
	}{
		{"author by default", node("bob", journal.ScopePrivate), feedback.Flag{Feedback: "wrong", By: "ann"}, nil, "bob", journal.ScopePrivate},
		{"another agent on a shared memory", node("bob", journal.ScopeShared), feedback.Flag{Feedback: "verified", Writer: "alice"}, nil, "alice", journal.ScopeShared},
		{"another agent on a private memory", node("bob", journal.ScopePrivate), feedback.Flag{Feedback: "wrong", Writer: "alice"}, feedback.ErrNotVisible, "", ""},
		{"no such agent", node("bob", journal.ScopeShared), feedback.Flag{Feedback: "wrong", Writer: "mallory"}, feedback.ErrNotVisible, "", ""},
		{"unknown feedback", node("bob", journal.ScopeShared), feedback.Flag{Feedback: "delete"}, feedback.ErrUnknownFeedback, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := memsync.Layout{Root: t.TempDir()}
			for _, a := range []string{"alice", "bob"} {
				if err := os.MkdirAll(l.JournalDir(a), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			res, err := feedback.Journal(l, c.n, c.f, feedback.Options{Now: func() time.Time { return now }})
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Fatalf("err %v, want %v", err, c.err)
				}
				for _, a := range []string{"alice", "bob"} {
					if entries, _ := os.ReadDir(l.JournalDir(a)); len(entries) != 0 {
						t.Fatalf("%s's journal written on a refused flag", a)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			rec := res.Record
			by := c.f.By
			if by == "" {
				by = "human"
			}
			if rec.Agent != c.wantWriter || rec.Scope != c.wantScope || rec.Feedback() != c.f.Feedback || rec.Source.Actor != by ||
				len(rec.Links) != 1 || rec.Links[0] != c.n.UUID || rec.Kind != journal.KindFeedback {
				t.Errorf("record %+v", rec)
			}
			var got []memsync.Memory
			if err := memsync.EachRecord(l, c.wantWriter, func(m memsync.Memory) error { got = append(got, m); return nil }); err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0].UUID != rec.UUID || got[0].Path != res.Path {
				t.Errorf("journal holds %+v, want the record at %s", got, res.Path)
			}
		})
	}
}
