package cache

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/memsync/memsync/graph/embedded"
	"github.com/memsync/memsync/graph/graphtest"
	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

// fleetCorpus is graphtest.Corpus spread over agents agents.
func fleetCorpus(agents, perAgent int) ([]memsync.Memory, []string) {
	corpus := graphtest.Corpus(42, agents*perAgent)
	names := make([]string, agents)
	for i := range names {
		names[i] = fmt.Sprintf("a%04d", i)
	}
	for i := range corpus {
		a := names[i%agents]
		corpus[i].Agent = a
		corpus[i].Path = "agents/" + a + "/memory/journal/" + journal.FileName(corpus[i].TS)
	}
	return corpus, names
}

// BenchmarkFleetSharedRecord regenerates the snapshots of 2,000 agents
// (5 memories each) after one shared record, as the daemon does.
func BenchmarkFleetSharedRecord(b *testing.B) {
	g, err := embedded.Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	corpus, agents := fleetCorpus(2000, 5)
	if _, err := g.Apply(context.Background(), corpus); err != nil {
		b.Fatal(err)
	}
	layout := memsync.Layout{Root: b.TempDir()}
	w := NewWriter(g, layout, nil)
	if _, err := w.Generate(context.Background(), agents); err != nil {
		b.Fatal(err)
	}
	last := corpus[len(corpus)-1].TS
	var cpu time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		ts := last.Add(time.Duration(i+1) * time.Second)
		rec := journal.Record{UUID: fmt.Sprintf("mem_%s_churn_%04d", journal.UUIDTime(ts), i), TS: ts, Agent: agents[0],
			Kind: journal.KindFact, Scope: journal.ScopeShared, Text: "churn fact"}
		if _, err := g.Apply(context.Background(), []memsync.Memory{{Record: rec, Path: "agents/a0000/memory/journal/" + journal.FileName(ts), Line: i + 1}}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		c0 := processCPU()
		if _, err := w.Generate(context.Background(), agents); err != nil {
			b.Fatal(err)
		}
		cpu += processCPU() - c0
	}
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/regen")
}
