package importer

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var benchWords = []string{"billing", "ledger", "cache", "deploy", "queue", "schema", "index", "retry", "vendor", "budget",
	"report", "latency", "cluster", "backup", "invoice", "migration", "token", "quota", "alert", "release"}

// writeNotes writes n Basic Memory notes under dir, each with
// frontmatter, a paragraph, three observations and two relations to
// other notes: what a knowledge base of n notes looks like.
func writeNotes(tb testing.TB, dir string, n int) {
	tb.Helper()
	for i := 0; i < n; i++ {
		w := func(k int) string { return benchWords[(i*7+k*3)%len(benchWords)] }
		sub := filepath.Join(dir, fmt.Sprintf("area-%02d", i%50))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			tb.Fatal(err)
		}
		note := fmt.Sprintf(`---
title: Note %d %s
type: note
tags: [%s, %s]
permalink: note-%d
created: 2025-%02d-%02dT%02d:%02d:00Z
---
# Note %d %s

The %s of system %d depends on its %s; reviewed in week %d.

## Observations
- [fact] System %d keeps its %s for %d minutes #%s
- [decision] Move the %s of system %d to the %s tier
- [technique] Check the %s before every %s of system %d

## Relations
- relates_to [[Note %d %s]]
- depends_on [[Note %d %s]]
`, i, w(0), w(1), w(2), i, 1+i%12, 1+i%28, i%24, i%60, i, w(0),
			w(3), i, w(4), i%52,
			i, w(5), 5+i%55, w(6),
			w(7), i, w(8),
			w(9), w(10), i,
			(i+1)%n, benchWords[((i+1)*7)%len(benchWords)], (i+17)%n, benchWords[((i+17)*7)%len(benchWords)])
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("note-%d.md", i)), []byte(note), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkImportNotes10k imports 10,000 generated Basic Memory notes
// (40,000 records) into an empty journal, fsync at the end included.
// MEMSYNC_BENCH_NOTES_DIR, when set, keeps the notes there (for Basic
// Memory's own import of the same notes).
func BenchmarkImportNotes10k(b *testing.B) {
	const n = 10000
	src := b.TempDir()
	if d := os.Getenv("MEMSYNC_BENCH_NOTES_DIR"); d != "" {
		src = d
	}
	writeNotes(b, src, n)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		opts := repoFor(b, "basic-memory", src)
		opts.Now = time.Now
		b.StartTimer()
		rep, err := importNow(context.Background(), opts)
		if err != nil {
			b.Fatal(err)
		}
		if rep.Imported != 4*n || len(rep.Unparsable) != 0 || len(rep.Unresolved) != 0 {
			b.Fatalf("imported %d, unparsable %d, unresolved %d", rep.Imported, len(rep.Unparsable), len(rep.Unresolved))
		}
		// A second run over the same notes: what an idempotent re-import costs.
		b.StopTimer()
		start := time.Now()
		again, err := importNow(context.Background(), opts)
		if err != nil || again.Imported != 0 {
			b.Fatalf("re-import: %+v %v", again, err)
		}
		b.ReportMetric(time.Since(start).Seconds(), "reimport-s")
		b.StartTimer()
	}
	b.ReportMetric(float64(4*n), "records")
}
