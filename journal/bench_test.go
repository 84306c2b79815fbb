package journal_test

import (
	"testing"

	"github.com/memsync/memsync/journal"
)

// benchLines are journal lines shaped like the benchmark harness's corpus
// (cmd/bench): about 370 bytes, one with @, # and [[ ]] mentions in its
// text, one whose text mentions nothing.
var benchLines = []struct{ name, line string }{
	{"entities", `{"uuid":"mem_20261121T091500Z_alice_0042","ts":"2026-11-21T09:15:00.123Z","agent":"alice","kind":"decision","scope":"shared","text":"Chose #postgres over kafka for the billing queue after @Mira reviewed [[Q3 Plan]]; latency budget holds","entities":["Acme Corp"],"tags":["db","infra"],"links":["mem_20261120T080000Z_alice_0003"],"session":"s-alice-12","why":"cheaper to run, the team knows it"}`},
	{"plain", `{"uuid":"mem_20261121T091500Z_alice_0043","ts":"2026-11-21T09:15:00.123Z","agent":"alice","kind":"decision","scope":"shared","text":"Chose postgres over kafka for the billing queue after the review of the third quarter plan; latency budget","entities":["Acme Corp"],"tags":["db","infra"],"links":["mem_20261120T080000Z_alice_0003"],"session":"s-alice-12","why":"cheaper to run, the team knows it"}`},
}

func parsedBench(b *testing.B) []journal.Record {
	b.Helper()
	var out []journal.Record
	for _, bl := range benchLines {
		r, err := journal.Parse([]byte(bl.line))
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func BenchmarkParse(b *testing.B) {
	for _, bl := range benchLines {
		line := []byte(bl.line)
		b.Run(bl.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := journal.Parse(line); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkCanonical(b *testing.B) {
	for i, r := range parsedBench(b) {
		b.Run(benchLines[i].name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r.Canonical()
			}
		})
	}
}

func BenchmarkHash(b *testing.B) {
	for i, r := range parsedBench(b) {
		b.Run(benchLines[i].name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r.Hash()
			}
		})
	}
}

func BenchmarkExtractEntities(b *testing.B) {
	for i, r := range parsedBench(b) {
		b.Run(benchLines[i].name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				journal.ExtractEntities(r.Text)
			}
		})
	}
}

func BenchmarkCanonicalHash(b *testing.B) {
	for i, r := range parsedBench(b) {
		b.Run(benchLines[i].name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r.CanonicalHash()
			}
		})
	}
}
