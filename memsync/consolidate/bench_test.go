package consolidate_test

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/consolidate"
)

// benchRecords is the size of the agent the benchmark consolidates.
const benchRecords = 100_000

// benchRepo writes one agent's journals: benchRecords records over 100
// days (1,000 a day), of which 60 % learning observations and facts on
// 300 topics (3 % of them duplicates of an earlier one), 10 % decisions
// (a third with an outcome), 5 % procedures (some used by later tasks),
// 2 % superseding records, a few core memories; the rest working tasks.
func benchRepo(b *testing.B) string {
	b.Helper()
	root := b.TempDir()
	dir := memsync.Layout{Root: root}.JournalDir("ada")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewSource(7))
	words := make([]string, 3000)
	for i := range words {
		words[i] = fmt.Sprintf("w%d", i)
	}
	sentence := func(n int) string {
		s := ""
		for i := 0; i < n; i++ {
			if i > 0 {
				s += " "
			}
			s += words[rng.Intn(len(words))]
		}
		return s
	}
	start := now.Add(-100 * 24 * time.Hour)
	var uuids, texts, decisions, procedures []string
	files := map[string]*os.File{}
	for i := 0; i < benchRecords; i++ {
		r := journal.Record{UUID: fmt.Sprintf("mem_b%06d", i), Agent: "ada", Scope: journal.ScopePrivate,
			TS: start.Add(time.Duration(i) * 100 * 24 * time.Hour / benchRecords)}
		switch p := rng.Intn(100); {
		case p < 60:
			r.Kind, r.Tier = journal.KindObservation, "learning"
			r.Text = sentence(8 + rng.Intn(12))
			if rng.Intn(100) < 3 && len(texts) > 0 {
				r.Text = texts[rng.Intn(len(texts))]
			}
			r.Tags = []string{fmt.Sprintf("topic%d", rng.Intn(300))}
			if rng.Intn(10) == 0 {
				r.Confidence = "low"
			}
			texts = append(texts, r.Text)
		case p < 70:
			r.Kind, r.Text = journal.KindDecision, sentence(10)
			decisions = append(decisions, r.UUID)
		case p < 73 && len(decisions) > 0:
			r.Kind, r.Text = journal.KindOutcome, sentence(6)
			r.Links = []string{decisions[rng.Intn(len(decisions))]}
		case p < 78:
			r.Kind, r.Text = journal.KindProcedure, sentence(12)
			procedures = append(procedures, r.UUID)
		case p < 80 && len(uuids) > 0:
			r.Kind, r.Tier, r.Text = journal.KindFact, "learning", sentence(10)
			r.Supersedes = []string{uuids[rng.Intn(len(uuids))]}
		case p < 81 && i%97 == 0:
			r.Kind, r.Tier, r.Text = journal.KindPreference, "core", sentence(8)
		default:
			r.Kind, r.Tier, r.Text = journal.KindTask, "working", sentence(8)
			if len(procedures) > 0 && rng.Intn(4) == 0 {
				r.Links = []string{procedures[rng.Intn(len(procedures))]}
			}
		}
		uuids = append(uuids, r.UUID)
		name := journal.FileName(r.TS)
		f := files[name]
		if f == nil {
			var err error
			if f, err = os.Create(filepath.Join(dir, name)); err != nil {
				b.Fatal(err)
			}
			files[name] = f
		}
		if _, err := f.Write(append(r.Canonical(), '\n')); err != nil {
			b.Fatal(err)
		}
	}
	for _, f := range files {
		f.Close()
	}
	return root
}

// BenchmarkConsolidate100k: one agent with 100,000 records. "first" is a
// run that journals everything due (on a fresh copy of the journals each
// time); "again" is a run with nothing left to do (what the daemon pays
// every consolidation.interval once caught up).
//
//	go test -run '^$' -bench Consolidate100k -benchtime 3x ./memsync/consolidate/
func BenchmarkConsolidate100k(b *testing.B) {
	src := benchRepo(b)
	opts := func(root string) consolidate.Options {
		return consolidate.Options{Root: root, Agent: "ada", NoSync: true, Now: func() time.Time { return now }}
	}
	b.Run("first", func(b *testing.B) {
		var actions int
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			root := b.TempDir()
			if err := os.CopyFS(root, os.DirFS(src)); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			rep, err := consolidate.Run(context.Background(), opts(root))
			if err != nil {
				b.Fatal(err)
			}
			actions = len(rep.Actions)
		}
		b.ReportMetric(float64(actions), "actions")
	})
	b.Run("again", func(b *testing.B) {
		if _, err := consolidate.Run(context.Background(), opts(src)); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			rep, err := consolidate.Run(context.Background(), opts(src))
			if err != nil || len(rep.Actions) != 0 {
				b.Fatalf("%v, %d actions", err, len(rep.Actions))
			}
		}
	})
}
