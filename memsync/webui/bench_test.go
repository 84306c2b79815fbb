package webui_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
)

// BenchmarkNewPages times the timeline, the queue and the fleet page over
// 5,000 recent records (the chart's TimelineMax): the pages that read a
// window of records rather than a few lists.
func BenchmarkNewPages(b *testing.B) {
	r := newRig(&testing.T{}, "")
	kinds := []journal.Kind{journal.KindFact, journal.KindObservation, journal.KindDecision, journal.KindProcedure}
	for i := range 5000 {
		agent := []string{"alice", "bob"}[i%2]
		rec := journal.Record{Agent: agent, Kind: kinds[i%len(kinds)], Scope: journal.ScopeShared,
			TS: r.now.Add(-time.Duration(i) * 7 * time.Minute), Text: fmt.Sprintf("record %d about the billing service and its deploys", i)}
		if i%10 == 0 {
			rec.Tier, rec.Confidence = "learning", "low"
		}
		r.add(fmt.Sprint("n", i), rec)
	}
	r.sync()
	for _, path := range []string{"/", "/timeline", "/queue", "/entities", "/timeline?status=review"} {
		b.Run(strings.TrimPrefix(path, "/"), func(b *testing.B) {
			for b.Loop() {
				if w := r.get(path); w.Code != http.StatusOK {
					b.Fatalf("%s: %d", path, w.Code)
				}
			}
		})
	}
}
