// Package graphtest is the conformance suite every memsync.Graph backend
// must pass, and a seeded corpus generator for tests and benchmarks.
package graphtest

import (
	"fmt"
	"math/rand"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

// Base is the timestamp of the first corpus record.
var Base = time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC)

var agentKinds = []journal.Kind{
	journal.KindDecision, journal.KindPreference, journal.KindObservation, journal.KindTask,
	journal.KindFact, journal.KindConflict, journal.KindProcedure, journal.KindReflection,
	journal.KindSummary, journal.KindOutcome, journal.KindCorrection,
}

var words = []string{
	"deploy", "database", "migration", "latency", "budget", "customer", "invoice", "planner",
	"retry", "backoff", "graph", "index", "cache", "snapshot", "release", "rollback",
	"postgres", "kafka", "schema", "tenant", "quota", "alert", "oncall", "runbook",
	"contract", "pricing", "roadmap", "review", "benchmark", "journal", "compaction", "outbox",
}

var entityPool = []string{"@Shaun", "@Mira", "#moonshot", "#billing", "Acme Corp", "Globex", "[[Q3 Plan]]", "#infra"}

// Corpus returns n valid memories from a few agents, with every agent kind,
// both scopes, entities, links, supersessions and conflicts (some pointing
// at records that come later, so replay order matters to a naive backend).
// The same seed and n always give the same corpus.
func Corpus(seed int64, n int) []memsync.Memory {
	rng := rand.New(rand.NewSource(seed))
	agents := []string{"alice", "bob", "carol", "dave", "erin"}
	out := make([]memsync.Memory, 0, n)
	lines := map[string]int{}
	for i := 0; i < n; i++ {
		agent := agents[rng.Intn(len(agents))]
		ts := Base.Add(time.Duration(i)*1500*time.Millisecond + time.Duration(rng.Intn(1000))*time.Microsecond)
		text := ""
		for w := 0; w < 6+rng.Intn(12); w++ {
			if w > 0 {
				text += " "
			}
			text += words[rng.Intn(len(words))]
		}
		rec := journal.Record{
			UUID:  fmt.Sprintf("mem_%s_%s_%04d", journal.UUIDTime(ts), agent, i%10000),
			TS:    ts,
			Agent: agent,
			Kind:  agentKinds[rng.Intn(len(agentKinds))],
			Scope: journal.ScopePrivate,
			Text:  text,
		}
		if rng.Intn(3) == 0 {
			rec.Scope = journal.ScopeShared
		}
		if rng.Intn(2) == 0 {
			rec.Text += " " + entityPool[rng.Intn(len(entityPool))]
		}
		if rng.Intn(4) == 0 {
			rec.Entities = []string{entityPool[rng.Intn(len(entityPool))]}
			rec.Tags = []string{words[rng.Intn(len(words))]}
		}
		if i > 0 && rng.Intn(4) == 0 {
			rec.Links = []string{out[rng.Intn(i)].UUID}
		}
		if i > 0 && rng.Intn(10) == 0 {
			rec.Supersedes = []string{out[rng.Intn(i)].UUID}
		}
		if i > 0 && rng.Intn(15) == 0 {
			rec.ConflictsWith = []string{out[rng.Intn(i)].UUID}
		}
		if rng.Intn(8) == 0 {
			rec.Source = &journal.Source{Type: journal.SourceTypes[rng.Intn(len(journal.SourceTypes))], Actor: "@Shaun"}
			rec.Confidence = journal.Confidences[rng.Intn(3)]
		}
		path := fmt.Sprintf("agents/%s/memory/journal/%s", agent, journal.FileName(ts))
		lines[path]++
		out = append(out, memsync.Memory{Record: rec, Path: path, Line: lines[path]})
	}
	// A few forward references: edges to records that come later.
	for i := 0; i+10 < n; i += 97 {
		j := i + 1 + rng.Intn(n-i-1)
		if out[j].UUID != out[i].UUID {
			out[i].Links = append(out[i].Links, out[j].UUID)
		}
	}
	return out
}
