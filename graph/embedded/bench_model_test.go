package embedded

import (
	"strconv"
	"testing"

	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/embed"
)

// BenchmarkApplyModel is BenchmarkApplyFlush (100,000 corpus records in
// batches of 1,000, Flush inside the clock), lexical only and with the
// built-in model, with the CPU it costs: the whole process's and the
// writer's thread's (the projection's critical path), per 100,000 records.
// Under load, the CPU seconds are the comparable figures.
func BenchmarkApplyModel(b *testing.B) {
	for _, c := range []struct {
		name string
		emb  memsync.Embedder
	}{{"none", nil}, {"default", embed.Default()}} {
		b.Run(c.name, func(b *testing.B) { benchmarkApply(b, true, c.emb, benchBatch) })
	}
}

// BenchmarkApplyBatch is BenchmarkApplyModel's lexical projection in
// batches of 1,000 and of 5,000: what fewer, larger transactions (fewer
// commits, each with its fsync) would buy a rebuild.
func BenchmarkApplyBatch(b *testing.B) {
	for _, n := range []int{1000, 5000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) { benchmarkApply(b, true, nil, n) })
	}
}
